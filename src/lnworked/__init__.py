"""lnworked: the tested library behind the book on LayerNorm placement (Post-LN vs Pre-LN)."""

__version__ = "0.1.0"
