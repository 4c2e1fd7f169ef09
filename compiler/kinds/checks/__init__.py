"""One module per check kind, each defining ``ENTRY`` (:class:`..entry.CheckKindEntry`)."""
