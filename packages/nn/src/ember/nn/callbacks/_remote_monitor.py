"""``RemoteMonitor``: POST each epoch's logs to an HTTP server."""

from __future__ import annotations

import json
import urllib.error
import urllib.parse
import urllib.request
import warnings
from typing import Any

import numpy as np

from ._base import Callback

TIMEOUT_S = 10.0  # how long one POST may take before it is given up (with a warning)


class RemoteMonitor(Callback):
    """Send the logs at the end of every epoch to ``root + path`` as an HTTP POST (Keras's).

    Args:
        root: the server's root URL.
        path: the path under ``root`` the events go to.
        field: the form field holding the JSON-encoded logs (when not ``send_as_json``).
        headers: extra HTTP headers, a dict.
        send_as_json: True sends the logs as the request's JSON body
            (``application/json``); False as a form field.

    The body is ``{"epoch": epoch, **logs}``. Keras sends it with the ``requests`` library;
    ember with the standard library's ``urllib`` (no extra dependency). A server that
    cannot be reached (or takes over ``TIMEOUT_S`` seconds) gives a warning, not an error:
    training goes on.
    """

    def __init__(self, root: str = "http://localhost:9000", path: str = "/publish/epoch/end/",
                 field: str = "data", headers: Any = None, send_as_json: bool = False) -> None:
        super().__init__()
        for arg, value in (("root", root), ("path", path), ("field", field)):
            if not isinstance(value, str):
                raise TypeError(f"RemoteMonitor: {arg} must be a str, got {value!r}")
        if headers is not None and not isinstance(headers, dict):
            raise TypeError(f"RemoteMonitor: headers must be a dict, got {headers!r}")
        if not isinstance(send_as_json, bool):
            raise TypeError(f"RemoteMonitor: send_as_json must be a bool, got {send_as_json!r}")
        self.root, self.path, self.field = root, path, field
        self.headers, self.send_as_json = headers, send_as_json

    def on_epoch_end(self, epoch: int, logs: Any = None) -> None:
        send: dict[str, Any] = {"epoch": epoch}
        for k, v in (logs or {}).items():
            send[k] = v.item() if isinstance(v, (np.ndarray, np.generic)) else v
        headers = dict(self.headers or {})
        if self.send_as_json:
            body = json.dumps(send).encode()
            headers.setdefault("Content-Type", "application/json")
        else:
            body = urllib.parse.urlencode({self.field: json.dumps(send)}).encode()
            headers.setdefault("Content-Type", "application/x-www-form-urlencoded")
        request = urllib.request.Request(self.root + self.path, data=body, headers=headers,
                                         method="POST")
        try:
            with urllib.request.urlopen(request, timeout=TIMEOUT_S) as response:
                response.read()
        except (urllib.error.URLError, OSError) as e:
            warnings.warn(f"RemoteMonitor: could not reach the server at {self.root} "
                          f"({e})", stacklevel=2)
