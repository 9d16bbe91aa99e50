"""Scripts users run: training and evaluating agents (imports ``pokegym`` and ``policies``)."""
