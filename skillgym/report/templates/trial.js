// Steps through a recording's frames; without a script the last frame is shown.
(function () {
  "use strict";
  Array.prototype.forEach.call(document.querySelectorAll(".frames"), function (box) {
    var frames = JSON.parse(box.querySelector("script[type='application/json']").textContent);
    var screen = box.querySelector("pre"), slider = box.querySelector("input[type=range]");
    var label = box.querySelector(".frame-time"), play = box.querySelector("button");
    var timer = null;
    box.querySelector(".controls").classList.remove("hidden");
    function show(i) {
      slider.value = i; screen.textContent = frames[i].text;
      label.textContent = "frame " + (i + 1) + "/" + frames.length + " at " + frames[i].time + " s";
    }
    slider.addEventListener("input", function () { show(parseInt(slider.value, 10)); });
    play.addEventListener("click", function () {
      if (timer) { clearInterval(timer); timer = null; play.textContent = "play"; return; }
      var i = parseInt(slider.value, 10) >= frames.length - 1 ? 0 : parseInt(slider.value, 10);
      play.textContent = "pause";
      timer = setInterval(function () {
        show(i); i += 1;
        if (i >= frames.length) { clearInterval(timer); timer = null; play.textContent = "play"; }
      }, 250);
    });
  });
})();
