"""The toolkit's version: one source for the package metadata (setup.cfg reads it), `solvers`
and `psro`."""

__version__ = "0.1.0"
