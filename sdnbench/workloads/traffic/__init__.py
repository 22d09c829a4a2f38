"""Traffic engines: each runs flows between emulated hosts and returns FlowResults."""
