"""roofline_capture: records a PyTorch module's forward pass at the aten level and writes it as a
roofline graph (docs/graph-format.md) for `roofline model GRAPH.json`.

    from roofline_capture import capture
    graph = capture(model.eval(), (x,), name="resnet50", batch_dim=0)
    graph.save("resnet50.json")     # then: roofline model resnet50.json --hw h100-sxm
"""

from ._capture import CaptureError, __version__, capture
from .graph import Graph

__all__ = ["capture", "CaptureError", "Graph", "__version__"]
