"""One run start to finish (the runner), its metrics, interrupts, leases, and many runs."""
