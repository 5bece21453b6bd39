"""Chapter 9's digits explorer: draw an 8 x 8 digit, see what the Vision Transformer and the linear layer answer.

``DigitExplorer`` (ipywidgets, calling back into the kernel) holds an 8 x 8 grid of cells the reader inks,
a menu of held-out test digits to start from, and shows, side by side, the class probabilities of the
chapter's Vision Transformer (``vision.VisionTransformer``) and of its baseline, one linear layer on the raw
pixels, with the class token's attention over the 16 patches (:func:`read_digit`). In the static book its
HTML form (``browser.page.live_explorer_html("vit", ...)``) carries both models' weights, rounded at
``html_embed.PAGE_DECIMALS`` (:func:`digit_state`): ``static/vit-explorer.js`` runs the Vision Transformer
on ``static/book-model.js``'s encoder (``Core.encodeRows``), so nothing is fetched. tests/test_live_vit.py
holds the page's numbers equal to Python's on the same rounded weights.

A cell's ink cycles through ``LEVELS`` (blank, half, full): the digits are grey levels 0 to 16 scaled to
[0, 1], mostly blank or near full with greys at a stroke's edges; three levels draw both in one or two
presses a cell, where 17 would take a reader up to 16.
"""

from __future__ import annotations

import ipywidgets as widgets
import torch
from torch import Tensor, nn

from ..capture import keep_attention_weights
from ..html_embed import PAGE_DECIMALS
from ..validation import check_choice, check_fraction, check_instance, check_int
from ..validation_tensors import check_finite, check_tensor
from ..vision import DIGIT_SIZE, N_DIGITS, DigitSplit, VisionTransformer
from .live import LiveExplorer
from .page import live_explorer_html

LEVELS = (0.0, 0.5, 1.0)  # a cell's ink, in the order a press cycles through them
N_SHOWN = 10  # test digits in the menu: the first of each label


def next_level(value: float) -> float:
    """The ink after one press on a cell holding ``value``: the next level above it, after full blank again."""
    value = check_fraction("value", value, "ink")
    above = [level for level in LEVELS if level > value + 1e-9]
    return above[0] if above else LEVELS[0]


def check_image(image: object) -> Tensor:
    """An (8, 8) float tensor of ink in [0, 1]."""
    image = check_tensor("image", image)
    if tuple(image.shape) != (DIGIT_SIZE, DIGIT_SIZE) or not image.is_floating_point():
        raise ValueError(f"image: expected an 8 x 8 float tensor, got {image.dtype} {tuple(image.shape)}")
    check_finite("image", image)
    if image.min() < 0 or image.max() > 1:
        raise ValueError(f"image: expected ink in [0, 1], got values from {image.min():g} to {image.max():g}")
    return image


def check_linear(linear: object) -> nn.Module:
    """The chapter's baseline: ``nn.Sequential(nn.Flatten(), nn.Linear(64, 10))``."""
    ok = (isinstance(linear, nn.Sequential) and len(linear) == 2 and isinstance(linear[0], nn.Flatten)
          and isinstance(linear[1], nn.Linear) and linear[1].in_features == DIGIT_SIZE ** 2
          and linear[1].out_features == N_DIGITS)
    if not ok:
        raise TypeError(f"linear: expected nn.Sequential(nn.Flatten(), nn.Linear(64, 10)), got {linear!r:.120}")
    return linear


@torch.no_grad()
def read_digit(vit: VisionTransformer, linear: nn.Module, image: Tensor) -> dict:
    """Both models on one (8, 8) image: ``vit`` and ``linear``, the probabilities over 0-9; ``attention``, per
    layer and head, the class token's row of weights over itself then the patches (1 + 16)."""
    check_instance("vit", vit, VisionTransformer, "a vision.VisionTransformer")
    check_linear(linear)
    image = check_image(image).to(vit.project.weight.dtype)[None]  # (1, 8, 8)
    with keep_attention_weights(vit):
        vit_probs = vit.eval()(image).softmax(-1)[0]
        rows = [layer.self_attn.last_weights[0, :, 0] for layer in vit.classifier.encoder.layers]  # (H, 1 + T) each
    linear_probs = linear.eval()(image.to(linear[1].weight.dtype)).softmax(-1)[0]
    return {"vit": vit_probs.tolist(), "linear": linear_probs.tolist(), "attention": [r.tolist() for r in rows]}


def _rounded(tensor: Tensor) -> list[float]:
    return [round(v, PAGE_DECIMALS) for v in tensor.detach().double().flatten().tolist()]


def digit_state(vit: VisionTransformer, linear: nn.Module, digits: DigitSplit, image: Tensor | None = None) -> dict:
    """The page's state: both models' weights (rounded at ``PAGE_DECIMALS``, named as their state_dicts), the
    menu of test digits (the first of each label) and the image to start from (None: the first test image, the
    one chapter 9's figure shows)."""
    check_instance("vit", vit, VisionTransformer, "a vision.VisionTransformer")
    check_linear(linear)
    check_instance("digits", digits, DigitSplit, "a vision.DigitSplit")
    config = vit.classifier.config
    if vit.classifier.position is None:
        raise ValueError("vit: expected a Vision Transformer with learned positions, got one without")
    tensors, values = {}, []
    for name, tensor in vit.state_dict().items():
        tensors[name] = {"offset": len(values), "shape": list(tensor.shape)}
        values += _rounded(tensor)
    menu = digit_menu(digits)
    start = menu[_first_test_image(menu)]["pixels"] if image is None else _rounded(check_image(image))
    return {
        "model": {"config": {"d_model": config.d_model, "n_heads": config.n_heads,
                             "n_encoder_layers": config.n_encoder_layers, "d_ff": config.d_ff,
                             "norm_first": config.norm_first, "layer_norm_eps": config.layer_norm_eps,
                             "max_len": config.max_len},
                  "patch": vit.patch, "tensors": tensors, "floats": len(values), "values": values},
        "linear": {"weight": _rounded(linear[1].weight), "bias": _rounded(linear[1].bias)},
        "menu": menu, "image": start, "levels": list(LEVELS),
    }


def digit_menu(digits: DigitSplit) -> list[dict]:
    """The first held-out test image of each label, in label order: its index, label and 64 pixels."""
    check_instance("digits", digits, DigitSplit, "a vision.DigitSplit")
    menu = []
    for label in range(N_DIGITS):
        found = (digits.test_labels == label).nonzero()
        if len(found):
            i = int(found[0])
            menu.append({"index": i, "label": label, "pixels": _rounded(digits.test_images[i])})
    return menu[:N_SHOWN]


def _first_test_image(menu: list[dict]) -> int:
    """The place in the menu of the first test image (the first of its label, so always in the menu)."""
    return min(range(len(menu)), key=lambda n: menu[n]["index"])


def _reading_html(reading: dict, head: str | int = "all") -> str:
    """What the explorer shows of a :func:`read_digit` result, as the page's script shows it: the two
    models' answers and probabilities as a table of numbers with bars, and the class token's attention
    (its last layer; ``head``: "all", averaged as the chapter's figure, or a head's index) as a 4 x 4
    table of per cent."""
    vit, linear, layer = reading["vit"], reading["linear"], reading["attention"][-1]
    if head == "all":
        row = [sum(h[j] for h in layer) / len(layer) for j in range(len(layer[0]))]
    else:
        row = layer[check_int("head", head)]
    best = [max(range(N_DIGITS), key=lambda c: p[c]) for p in (vit, linear)]  # the first maximum, as argmax

    def bar(p: float, answer: bool) -> str:
        mark = " <b>answer</b>" if answer else ""
        return (f'<td><span style="display:inline-block;width:{p * 6:.2f}em;height:0.8em;background:#1565c0">'
                f'</span> {p:.1%}{mark}</td>')

    rows = "".join(f"<tr><th>{c}</th>{bar(vit[c], c == best[0])}{bar(linear[c], c == best[1])}</tr>"
                   for c in range(N_DIGITS))
    side = int(round((len(row) - 1) ** 0.5))
    grid = "".join("<tr>" + "".join(f"<td>{row[1 + r * side + c]:.0%}</td>" for c in range(side)) + "</tr>"
                   for r in range(side))
    return (f"<p><b>Vision Transformer: {best[0]}</b>; <b>linear layer: {best[1]}</b></p>"
            f"<table><caption>Probability of each digit</caption><tr><th>digit</th><th>Vision Transformer</th>"
            f"<th>linear layer</th></tr>{rows}</table>"
            f"<table><caption>Class token's attention over the 16 patches "
            f"({'heads averaged' if head == 'all' else f'head {int(head) + 1}'}); on itself: {row[0]:.0%}</caption>"
            f"{grid}</table>")


class DigitExplorer(LiveExplorer):
    """Ink an 8 x 8 digit (or start from a test digit); see the Vision Transformer's answer, the class
    token's attention over the patches, and the linear layer's answer."""

    def __init__(self, vit: VisionTransformer, linear: nn.Module, digits: DigitSplit) -> None:
        check_instance("vit", vit, VisionTransformer, "a vision.VisionTransformer")
        self.vit, self.linear, self.digits = vit.eval(), check_linear(linear).eval(), digits
        self.menu = digit_menu(digits)
        first = _first_test_image(self.menu)  # the digit of the chapter's figure
        self.image = torch.tensor(self.menu[first]["pixels"]).reshape(DIGIT_SIZE, DIGIT_SIZE)
        self.reading: dict | None = None
        self.start = widgets.Dropdown(
            options=[("blank grid", -1), *[(f"test image {m['index']}: a {m['label']}", n)
                                           for n, m in enumerate(self.menu)]], value=first, description="Start from")
        heads = vit.classifier.config.n_heads
        self.head = widgets.Dropdown(options=[("heads averaged", "all"), *[(f"head {h + 1}", h) for h in range(heads)]],
                                     value="all", description="Head")
        self.cells = [widgets.Button(layout=widgets.Layout(width="2.4em", height="2.4em", margin="1px", padding="0"))
                      for _ in range(DIGIT_SIZE ** 2)]
        for n, cell in enumerate(self.cells):
            cell.on_click(lambda _, n=n: self._safely(lambda: self.press(n)))
        self.grid = widgets.GridBox(self.cells, layout=widgets.Layout(
            grid_template_columns=f"repeat({DIGIT_SIZE}, 2.6em)", width="fit-content"))
        self.messages = widgets.HTML()
        self.result = widgets.HTML()
        self.widget = widgets.VBox([widgets.HBox([self.start, self.head]), self.grid, self.messages, self.result])
        self.start.observe(lambda _: self._safely(self.choose), "value")
        self.head.observe(lambda _: self._safely(self.draw), "value")
        self._safely(self.run)

    def page_html(self) -> str:
        return live_explorer_html("vit", **digit_state(self.vit, self.linear, self.digits, self.image))

    def choose(self) -> None:
        """Start again from the menu's choice (a test digit, or the blank grid)."""
        chosen = check_choice("start", self.start.value, [-1, *range(len(self.menu))])
        pixels = [0.0] * DIGIT_SIZE ** 2 if chosen == -1 else self.menu[chosen]["pixels"]
        self.image = torch.tensor(pixels).reshape(DIGIT_SIZE, DIGIT_SIZE)
        self.run()

    def press(self, n: int) -> None:
        """Cell ``n`` (row by row) takes its next ink level."""
        if not 0 <= check_int("n", n) < DIGIT_SIZE ** 2:
            raise ValueError(f"n: expected a cell from 0 to {DIGIT_SIZE ** 2 - 1}, got {n}")
        r, c = divmod(n, DIGIT_SIZE)
        self.image[r, c] = next_level(float(self.image[r, c]))
        self.run()

    def run(self) -> None:
        self.messages.value = ""
        for n, cell in enumerate(self.cells):
            ink = float(self.image.flatten()[n])
            grey = round(255 * (1 - ink))
            cell.style.button_color = f"rgb({grey},{grey},{grey})"
            cell.tooltip = f"row {n // DIGIT_SIZE + 1}, column {n % DIGIT_SIZE + 1}: ink {ink:.0%}"
        self.reading = read_digit(self.vit, self.linear, self.image)
        self.draw()

    def draw(self) -> None:
        if self.reading is not None:
            self.result.value = _reading_html(self.reading, self.head.value)
