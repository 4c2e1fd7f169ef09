"""Kinds as data (issue 44): each operation kind and each check kind is one registry entry holding everything
about it (:mod:`.entry`), one module per kind (:mod:`.operations`, :mod:`.checks`), collected by
:mod:`.registry`. This package file imports nothing: the entries import the stages that implement them
(binders, lowering, fused rewrites, check SQL), and the stages that switch on a kind import
:mod:`.registry`, never the other way round."""
