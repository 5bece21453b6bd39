'use strict';
// The book's plotly.js: plotly.js's own modules, registered as its lib/index-cartesian.js does,
// for the trace types the book draws (scatter is part of the core) and nothing else.
// tools/vendor_assets.sh bundles this with esbuild into book/_static/vendor/plotly/plotly-book.min.js.
var Plotly = require('plotly.js/lib/core');

Plotly.register([require('plotly.js/lib/bar'), require('plotly.js/lib/heatmap')]);

module.exports = Plotly;
