"""ShapeScript's export runtime: turns an export spec into a torch.export program.

Importing this package does not import torch; `exporter` does.  See SPEC.md.
"""

__all__ = ["exporter", "run_export"]
