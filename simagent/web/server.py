"""`simagent web`: the web front end under uvicorn, on 127.0.0.1 unless told otherwise. Any other
interface needs a token; the token is never printed or logged (uvicorn's access log, which would
show request lines, is off)."""

from __future__ import annotations

import sys

from simagent.config import Settings
from simagent.web.security import check_bind


def serve(settings: Settings, host: str = "127.0.0.1", port: int = 8765, token: str | None = None,
          auto_approve: bool = False) -> None:
    check_bind(host, token)
    import uvicorn

    from simagent.web.app import create_app

    app = create_app(settings, token=token, auto_approve=auto_approve)
    shown = f"[{host}]" if ":" in host else host
    print(f"simagent web: http://{shown}:{port}/  (run folder {settings.workdir}; "
          f"{'token required' if token else 'no token'}; Ctrl-C stops)", file=sys.stderr)
    uvicorn.run(app, host=host, port=port, access_log=False, log_level="warning", server_header=False)
