"""What the figure tests share: the house style around each test and the visible words of a drawn figure.

A test module imports `house_style` (an autouse fixture: imported, it applies to every test of that module) and
`texts`."""
from __future__ import annotations

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import pytest  # noqa: E402

from ancer_lite.report import style  # noqa: E402


@pytest.fixture(autouse=True)
def house_style():
    """Draw in the house style (`style.apply`) and close every figure after the test."""
    style.apply()
    yield
    plt.close("all")


def texts(fig: matplotlib.figure.Figure) -> list[str]:
    """The non-empty visible strings of `fig` once drawn (titles, labels, tick labels, annotations, legends)."""
    fig.canvas.draw()
    return [t.get_text() for t in fig.findobj(matplotlib.text.Text) if t.get_visible() and t.get_text().strip()]
