"""One module per operation kind, each defining ``ENTRY`` (:class:`..entry.OperationKindEntry`)."""
