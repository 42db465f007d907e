// Package pve is the shared Proxmox VE API client of the collection's modules.
//
// It builds on github.com/luthermonson/go-proxmox for transport, API-token authentication and
// task polling, and adds what modules need on top of it:
//
//   - ConnectionOptions and Connection: community.proxmox's connection option names and
//     PROXMOX_* environment fallbacks, so a playbook's module_defaults work for both collections.
//   - Get, Post, Put, Delete: raw calls with PVE's {"data": ...} envelope; bodies are sent as
//     JSON (map[string]any or url.Values), queries as url.Values.
//   - APIError: every non-2xx answer becomes an *APIError carrying the HTTP status, PVE's message
//     and the per-parameter "errors" map of a 400 (go-proxmox drops both), usable with errors.As.
//   - WaitTask: waits for a worker task and fails unless its exit status is exactly "OK"
//     (go-proxmox's Task.Wait returns nil for a failed task); the error is a *TaskError with the
//     tail of the task log.
//   - Retries only where they are safe: a read is retried on network errors and transient 5xx
//     (502/503/504, a cfs lock timeout); a write only on "got no worker upid", which PVE returns
//     when the worker never started.
//
// The API is shared by several modules (SDN, VMs, tenant access): add to it, do not change it.
package pve
