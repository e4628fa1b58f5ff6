"""Putting ctxsieve in front of the coding agents on this machine: `ctxsieve install` / `uninstall` (each agent's
own config, with a backup of every file changed), `wrap` (one run of an agent through a proxy of its own), `doctor`
(what is wired and whether it works) and `stats` (the service's sessions). The service itself is started by
`ctxsieve service` (ctxsieve.service.lifecycle), which this package does not need."""
