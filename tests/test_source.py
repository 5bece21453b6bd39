import pytest

from transformer_lib.multi_head_attention import MultiHeadAttention
from transformer_lib.residual import Residual
from transformer_lib.source import show_source, source_of


def test_source_is_read_from_the_library_file():
    code = source_of(Residual.forward)
    assert code.startswith("def forward(self, x: Tensor, sublayer")
    assert "return self.norm(x + self.dropout(sublayer(x)))" in code


def test_a_part_between_markers():
    code = source_of(MultiHeadAttention, start="def split_heads", end="return x.view")
    assert code.splitlines()[0] == "def split_heads(self, x: Tensor) -> Tensor:"
    assert code.splitlines()[-1].strip().startswith("return x.view")


def test_markdown_names_the_module():
    md = show_source(Residual.forward)
    assert md.data.startswith("`transformer_lib.residual.Residual.forward`")
    assert "```python" in md.data


def test_missing_marker_is_an_error():
    with pytest.raises(ValueError, match="start: no line"):
        source_of(Residual.forward, start="no such line")
    with pytest.raises(TypeError, match="obj: expected a class"):
        source_of(3)
