// The ipywidgets HTML manager typesets widget labels with MathJax 2's API,
// MathJax.Hub.Queue(["Typeset", MathJax.Hub, element]); the book loads MathJax 3, which has no Hub.
// This hands those calls to MathJax 3. It runs on "load", before the widget manager's own handler.
window.addEventListener("load", function () {
  var mathjax = window.MathJax;
  if (mathjax && mathjax.startup && !mathjax.Hub) {
    mathjax.Hub = {
      Queue: function (job) {
        var element = job && job[2];
        if (element) {
          mathjax.startup.promise.then(function () { return mathjax.typesetPromise([element]); });
        }
      },
    };
  }
});
