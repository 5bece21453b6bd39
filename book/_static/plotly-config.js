/* Defaults for every plotly figure of the book, loaded right after plotly.js
 * (book/_ext/offline_assets.py). The same as transformer_lib.figures.display.PLOTLY_CONFIG, so that
 * a figure stored before that config existed is also drawn without plotly's "Share chart..." button,
 * which uploads the figure's data to plotly's cloud: nothing on these pages leaves their host. */
(function () {
  "use strict";
  if (!window.Plotly) return;
  window.Plotly.setPlotConfig({
    displaylogo: false, showSendToCloud: false, showEditInChartStudio: false, showLink: false,
    modeBarButtonsToRemove: ["sendChartToCloud", "sendDataToCloud", "editInChartStudio", "select2d", "lasso2d",
      "toggleSpikelines", "hoverClosestCartesian", "hoverCompareCartesian"],
  });
})();
