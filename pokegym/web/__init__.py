"""Play in the browser (``pokegym play --web``) and watch replays offline (``pokegym replay``).

- :mod:`pokegym.web.session`: battles for browser sessions, each running the same
  battle loop as the terminal (:func:`pokegym.play.run_battle`) in its own thread;
- :mod:`pokegym.web.view`: a battle as the JSON the page draws;
- :mod:`pokegym.web.replay`: saved battles (``.log``, ``.json``, ``.html``) as frames;
- :mod:`pokegym.web.sprites`: offline sprites from the npm package ``pokesprite-images``;
- :mod:`pokegym.web.app`: the Starlette app and its uvicorn server.

Importing this package imports neither starlette nor uvicorn.
"""
