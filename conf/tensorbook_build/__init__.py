"""How tensorbook is built: settings, execution, rendering and publishing.

The modules read as the build's pipeline, in this order:

``settings``
    the languages, the source language, the build's paths and the device variable;
``execute``, ``kernels``, ``forkserver``
    what keys a page's cached outputs, what its kernel's environment holds, and the
    warm kernels (forked from a server that imported torch) that run it over IPC;
``catalogs``, ``outputs``, ``pysource``, ``mathml``, ``downloads``, ``assets``, ``inline_css``
    what a page becomes: its translations, printed text, shown source, math,
    downloadable notebook and script, the site's light assets, and a ``<head>``
    that waits on no other download;
``pictures``, ``ledger``, ``provenance``
    its pictures in each edition and format, the outputs recorded on other devices
    beside its own, and its footer (the commit, the report link);
``site``, ``links``, ``pdf``
    the files around the editions (language index, 404 page, sitemap), the
    link check, and a PDF of each edition;
``build``, ``launch``
    the driver that runs Sphinx for each edition (``python -m tensorbook_build``), and
    how it starts each one (forked from itself, with Sphinx already imported);
``translate``
    the catalogs' refresh and the staleness gate;
``record``, ``kit``, ``compat``
    the runs elsewhere: the device ledger's recordings, the GPU kit, and a run with
    another torch.

``extensions`` holds the thin Sphinx adapters that ``conf/conf.py`` lists;
``upstream`` lists every private API the build reaches into;
``tools`` holds what only nox and the tests use. Nothing in ``src/tensorbook``
imports this package. This ``__init__`` imports nothing, so that reading the
settings stays cheap.
"""
