"""Knowledge editors, each registered with ``@editor`` (interface: :mod:`harness.editors`).

``none`` (unedited) and ``ike`` (all edits in context) in :mod:`.simple`; ``retrieval``
(MedREK-style key-aware retrieval, edit injected as a prompt) in :mod:`.retrieval`;
``medrek`` (the same retrieval, edit injected as a soft prompt through forward hooks;
white-box only) in :mod:`.medrek`. Build one by name with
:func:`harness.editors.make_editor`.
"""
