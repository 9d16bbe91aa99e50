"""Battles on a Ray cluster: tournaments (``compare --ray``) and collection (``collect --ray``).

Battles are independent given their seeds, so they scale out as Ray actors, each
owning its simulator and agent instances. Ray is optional (``pip install
'pokegym[ray]'``) and imported only when a run asks for it:

- :mod:`pokegym.scale.resources`: the ``num_cpus``/``num_gpus`` options of agent specs;
- :mod:`pokegym.scale.cluster`: Ray imported when asked, a cluster joined or started;
- :mod:`pokegym.scale.pool`: the workers (streamed results, retries of lost workers,
  failures reported);
- :mod:`pokegym.scale.arena`: the tournament's workers and driver.

See docs/scale.md.
"""
