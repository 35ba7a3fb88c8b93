"""``vis-export serve``: the local reading room over saved sessions.

``catalogue`` knows the sessions and where each is, ``keeper`` keeps a search
index of them when none is given, ``pages`` renders (templates in
``templates/serve/``), ``app`` is the Starlette application with its routes
and guards, ``server`` binds a socket and runs uvicorn. Needs the ``serve``
extra (Starlette, uvicorn); nothing here is imported by ``import vis_export``.
"""
