"""The web server of ``pokegym play --web`` and ``pokegym replay``: a Starlette app on uvicorn.

Routes (JSON unless noted)::

    GET  /                 the page (HTML); /replay the replay page
    GET  /static/...       the page's script and style; /sprites/<name>.png sprites
    GET  /api/config       format, opponents on offer, name rules
    POST /api/battle       {"opponent": spec, "name": text}: start this browser's battle
    GET  /api/state        ?after=VERSION[&battle=ID]: the battle's state, waiting up to
                           poll_seconds for a version newer than VERSION (at once when
                           ID is not this browser's current battle)
    POST /api/choice       {"decision": n, "option": number} or {"decision": n, "text": "..."}
    POST /api/forfeit      {}
    POST /api/rating       {"rating": 1-5 | null}
    GET  /api/replay       ?name=FILE (replays folder) or ?name=INDEX (pokegym replay's files)

A browser session is an HttpOnly, SameSite=Strict cookie; every POST must be JSON, so
another site cannot post into a battle. On a loopback address the server answers only
requests addressed to ``127.0.0.1``/``localhost`` (no DNS rebinding), and every page
is served with a Content-Security-Policy that allows no inline script.
"""

from __future__ import annotations

import asyncio
import contextlib
import http.cookies
import ipaddress
import logging
import secrets
import signal
import socket
import threading
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

from pokegym.errors import PokegymError, PortInUseError
from pokegym.web.replay import ReplayError, read_replay, replay_frames
from pokegym.web.session import BattleManager, WebConfig, WebPlayError

logger = logging.getLogger("pokegym.web")
STATIC = Path(__file__).with_name("static")
COOKIE = "pokegym_session"
CSP = (
    "default-src 'self'; img-src 'self' data:; style-src 'self'; script-src 'self'; "
    "connect-src 'self'; object-src 'none'; base-uri 'none'; frame-ancestors 'none'; "
    "form-action 'self'"
)
_NO_STORE = {"Cache-Control": "no-store"}
_SECURITY_HEADERS = {
    "Content-Security-Policy": CSP,
    "X-Content-Type-Options": "nosniff",
    "Referrer-Policy": "no-referrer",
    "Cache-Control": "no-store",
}


class WebDependencyError(PokegymError):
    """The web server's packages (starlette, uvicorn) are not installed."""


def _require_web() -> None:
    try:
        import starlette  # noqa: F401
        import uvicorn  # noqa: F401
    except ImportError as exc:
        raise WebDependencyError(
            f"`pokegym play --web` needs starlette and uvicorn ({exc}); install them with "
            "pip install -e '.[web]'."
        ) from exc


class BrowserSession:
    """Pure ASGI middleware: every request gets ``scope["state"]["browser"]``, a random
    key kept in a cookie (set on the first response)."""

    def __init__(self, app: Any):
        self.app = app

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        key = None
        for name, value in scope.get("headers", []):
            if name == b"cookie":
                jar = http.cookies.SimpleCookie()
                with contextlib.suppress(http.cookies.CookieError):
                    jar.load(value.decode("latin-1"))
                morsel = jar.get(COOKIE)
                if morsel is not None and 20 <= len(morsel.value) <= 64:
                    key = morsel.value
        new = key is None
        key = key or secrets.token_urlsafe(24)
        scope.setdefault("state", {})["browser"] = key

        async def send_with_cookie(message: dict[str, Any]) -> None:
            if message["type"] == "http.response.start" and new:
                cookie = f"{COOKIE}={key}; Path=/; HttpOnly; SameSite=Strict"
                message.setdefault("headers", []).append((b"set-cookie", cookie.encode()))
            await send(message)

        await self.app(scope, receive, send_with_cookie)


# Long on purpose: the routes are closures over ``manager``, declared together with the
# route table that names them.
def create_app(manager: BattleManager, *, hosts: list[str] | None = None) -> Any:
    """The Starlette application over ``manager`` (which the app closes at shutdown);
    ``hosts``: the Host headers it answers (None: any)."""
    _require_web()
    from starlette.applications import Starlette
    from starlette.middleware import Middleware
    from starlette.middleware.trustedhost import TrustedHostMiddleware
    from starlette.requests import Request
    from starlette.responses import FileResponse, JSONResponse, Response
    from starlette.routing import Mount, Route
    from starlette.staticfiles import StaticFiles

    config = manager.config

    def browser(request: Request) -> str:
        return str(request.scope["state"]["browser"])

    def error(exc: PokegymError, status: int = 400) -> JSONResponse:
        return JSONResponse(
            {"error": str(exc)}, status_code=getattr(exc, "status", status), headers=_NO_STORE
        )

    async def body(request: Request) -> dict[str, Any]:
        if request.headers.get("content-type", "").split(";")[0].strip() != "application/json":
            raise WebPlayError("Send the request as JSON (Content-Type: application/json).")
        try:
            data = await request.json()
        except ValueError:
            raise WebPlayError("The request body is not valid JSON.") from None
        if not isinstance(data, dict):
            raise WebPlayError("The request body must be a JSON object.")
        return data

    def page(request: Request) -> Response:
        return FileResponse(STATIC / "index.html", headers=_SECURITY_HEADERS)

    async def api_config(request: Request) -> Response:
        return JSONResponse(
            {
                "format": manager.template.fmt.id if manager.template else None,
                "format_name": manager.template.fmt.name if manager.template else None,
                "opponents": [{"spec": s, "name": n} for s, n in manager.opponents.items()],
                "replays_only": manager.template is None,
                "replay_files": len(config.replay_files),
                "abandon_after": config.abandon_after,
                "sprites": len(manager.sprites),
            },
            headers=_NO_STORE,
        )

    async def api_battle(request: Request) -> Response:
        try:
            data = await body(request)
            web = await asyncio.to_thread(
                manager.start, browser(request), data.get("opponent"), data.get("name")
            )
        except PokegymError as exc:
            return error(exc)
        return JSONResponse(web.snapshot(), status_code=201)

    async def api_state(request: Request) -> Response:
        try:
            web = manager.battle_of(browser(request))
        except PokegymError:  # no battle yet: the page shows the start form
            return JSONResponse({"status": "none"}, headers=_NO_STORE)
        web.touch()
        try:
            after = int(request.query_params.get("after", "-1"))
        except ValueError:
            after = -1
        asked_for = request.query_params.get("battle")
        if asked_for and asked_for != web.id:
            after = -1  # a page still on an earlier battle: the current one at once
        if web.version > after:
            return JSONResponse(web.snapshot(), headers=_NO_STORE)
        changed = asyncio.Event()
        loop = asyncio.get_running_loop()

        def wake() -> None:
            loop.call_soon_threadsafe(changed.set)

        web.listen(wake)
        try:
            waited = 0.0
            while web.version <= after and waited < config.poll_seconds:
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(changed.wait(), timeout=0.5)
                changed.clear()
                waited += 0.5
                if await request.is_disconnected():
                    return Response(status_code=204)
                if manager.stopping.is_set():
                    break  # the server stops: answer now rather than hold the shutdown
                web.touch()  # still connected: the page is open
        finally:
            web.unlisten(wake)
        web.touch()
        return JSONResponse(web.snapshot(), headers=_NO_STORE)

    async def api_choice(request: Request) -> Response:
        try:
            data = await body(request)
            web = manager.battle_of(browser(request))
            web.touch()
            chosen = web.submit_choice(data.get("decision"), data.get("option"), data.get("text"))
        except PokegymError as exc:
            return error(exc)
        return JSONResponse({"ok": True, "choice": chosen.label}, status_code=202)

    async def api_forfeit(request: Request) -> Response:
        try:
            await body(request)
            web = manager.battle_of(browser(request))
            web.touch()
            web.submit_forfeit()
        except PokegymError as exc:
            return error(exc)
        return JSONResponse({"ok": True}, status_code=202)

    async def api_rating(request: Request) -> Response:
        try:
            data = await body(request)
            web = manager.battle_of(browser(request))
            web.touch()
            web.submit_rating(data.get("rating"))
        except PokegymError as exc:
            return error(exc)
        return JSONResponse({"ok": True}, status_code=202)

    async def api_replay(request: Request) -> Response:
        name = request.query_params.get("name", "")
        try:
            path = manager.replay_path(name)
            replay = await asyncio.to_thread(read_replay, path)
            frames = await asyncio.to_thread(
                lambda: replay_frames(replay, manager.game_names(replay.gen), manager.sprites)
            )
        except ReplayError as exc:
            return error(exc, 404)
        return JSONResponse(
            {
                "name": Path(replay.source).name,
                "players": list(replay.players),
                "format": replay.format_name,
                "frames": frames,
            },
            headers=_NO_STORE,
        )

    async def sprite(request: Request) -> Response:
        path = manager.sprites.file(request.path_params["stem"])
        if path is None:
            return Response(status_code=404)
        return FileResponse(path, headers={"Cache-Control": "max-age=86400"})

    async def favicon(request: Request) -> Response:
        return FileResponse(STATIC / "favicon.svg", media_type="image/svg+xml")

    @contextlib.asynccontextmanager
    async def lifespan(app: Any) -> AsyncIterator[None]:
        try:
            yield
        finally:
            await asyncio.to_thread(manager.close)

    middleware = [Middleware(BrowserSession)]
    if hosts:
        middleware.insert(0, Middleware(TrustedHostMiddleware, allowed_hosts=list(hosts)))
    routes = [
        Route("/", page),
        Route("/replay", page),
        Route("/favicon.ico", favicon),
        Route("/api/config", api_config),
        Route("/api/battle", api_battle, methods=["POST"]),
        Route("/api/state", api_state),
        Route("/api/choice", api_choice, methods=["POST"]),
        Route("/api/forfeit", api_forfeit, methods=["POST"]),
        Route("/api/rating", api_rating, methods=["POST"]),
        Route("/api/replay", api_replay),
        Route("/sprites/{stem}.png", sprite),
        Mount("/static", StaticFiles(directory=STATIC), name="static"),
    ]
    return Starlette(routes=routes, middleware=middleware, lifespan=lifespan)


def loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def allowed_hosts(host: str) -> list[str] | None:
    """Host headers the server answers: loopback names on a loopback address, else any."""
    if loopback(host):
        return ["127.0.0.1", "localhost", "[::1]", host]
    return None


def make_server(
    manager: BattleManager, *, host: str = "127.0.0.1", port: int = 8765, log_level: str = "warning"
) -> Any:
    """A ``uvicorn.Server`` for the app (call ``.run()``; Ctrl-C and SIGTERM stop it and
    forfeit the battles that are still running)."""
    _require_web()
    import uvicorn

    class Server(uvicorn.Server):  # type: ignore[misc]
        def handle_exit(self, sig: int, frame: Any) -> None:
            manager.stopping.set()  # open long polls answer at once
            super().handle_exit(sig, frame)

    app = create_app(manager, hosts=allowed_hosts(host))
    config = uvicorn.Config(
        app,
        host=host,
        port=port,
        log_level=log_level,
        lifespan="on",
        timeout_graceful_shutdown=5,
        access_log=False,
    )
    return Server(config)


def bind(host: str, port: int) -> socket.socket:
    """A listening socket on ``host:port``.

    Raises:
        PortInUseError: the address cannot be bound (taken, or not this machine's).
    """
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        sock.bind((host, port))
        sock.listen(128)
    except OSError as exc:
        sock.close()
        raise PortInUseError(
            f"Cannot listen on {host}:{port} ({exc.strerror}); pick another --port."
        ) from exc
    sock.set_inheritable(True)
    return sock


def serve(
    config: WebConfig, *, host: str = "127.0.0.1", port: int = 8765, replay: bool = False
) -> int:
    """Run the server until Ctrl-C or SIGTERM; 0 after a clean stop.

    The address is bound first and the URL printed once the server can answer it.
    """
    _require_web()
    sock = bind(host, port)
    manager: BattleManager | None = None
    try:
        manager = BattleManager(config)
        manager.warm_up()
    except BaseException:
        if manager is not None:
            manager.close()
        sock.close()
        raise
    try:
        server = make_server(manager, host=host, port=port)
        shown_host = f"[{host}]" if ":" in host else host
        url = f"http://{shown_host}:{sock.getsockname()[1]}/" + ("replay?name=0" if replay else "")
        fmt = manager.template.fmt.name if manager.template is not None else ""
        what = "Replay" if replay else f"{fmt} battles"
        print(f"{what} on {url} (Ctrl-C stops the server)", flush=True)
        if not loopback(host):
            print(
                f"Warning: {host} is reachable from other machines and the server has no login.",
                flush=True,
            )
        # uvicorn shuts down gracefully on SIGINT/SIGTERM (battles forfeited and saved),
        # then raises the signal again: SIGINT ends as Ctrl-C does everywhere in the CLI
        # (exit 130); SIGTERM, asked for by a service manager, is a clean stop (exit 0).
        previous = None
        if threading.current_thread() is threading.main_thread():
            previous = signal.signal(signal.SIGTERM, lambda *_: None)
        try:
            server.run(sockets=[sock])
        finally:
            if previous is not None:
                signal.signal(signal.SIGTERM, previous)
    finally:
        manager.close()
        sock.close()
    print("The server stopped.", flush=True)
    return 0
