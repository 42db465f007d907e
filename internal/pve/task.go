package pve

import (
	"context"
	"fmt"
	"net/url"
	"sort"
	"strings"
	"time"
)

// ParseUPID returns the node of a worker task id "UPID:<node>:<pid>:<pstart>:<starttime>:<type>:<id>:<user>:".
func ParseUPID(upid string) (node, typ string, err error) {
	f := strings.Split(upid, ":")
	if len(f) < 8 || f[0] != "UPID" || f[1] == "" {
		return "", "", fmt.Errorf("malformed task id %q", upid)
	}
	return f[1], f[5], nil
}

// WaitTask polls a worker task until it stops and returns nil only when its exit status is "OK".
// A failed task gives a *TaskError with the tail of its log.
func (c *Client) WaitTask(ctx context.Context, upid string) error {
	node, _, err := ParseUPID(upid)
	if err != nil {
		return err
	}
	path := fmt.Sprintf("/nodes/%s/tasks/%s/status", url.PathEscape(node), url.PathEscape(upid))
	if c.cache != nil {
		// A task changes state while it runs: reads from before its end are not trusted after.
		defer c.cache.invalidate()
	}
	interval := c.cfg.PollInterval
	for {
		// A plain status read rather than go-proxmox's Task: Task's JSON decoding goes through
		// jinzhu/copier, whose reflect.MethodByName makes the linker keep every exported method of
		// every go-proxmox type (+1.6 MB in each module binary, docs/adr/0011-binary-selection.md).
		// Get retries transient failures itself.
		var st struct {
			Status     string `json:"status"`
			ExitStatus string `json:"exitstatus"`
		}
		if err := c.Get(ctx, path, nil, &st); err != nil {
			return fmt.Errorf("task %s status: %w", upid, err)
		}
		if st.Status == "stopped" {
			if st.ExitStatus == "OK" {
				return nil
			}
			return c.quorumHint(ctx, st.ExitStatus, &TaskError{UPID: upid, ExitStatus: st.ExitStatus, LogTail: c.taskLogTail(ctx, upid, 10)})
		}
		if !Sleep(ctx, interval) {
			return fmt.Errorf("waiting for task %s: %w", upid, ctx.Err())
		}
		if interval < time.Second {
			interval *= 2
		}
	}
}

// taskLogTail reads the last n lines of a task log; best effort, for error messages only.
func (c *Client) taskLogTail(ctx context.Context, upid string, n int) []string {
	node, _, _ := ParseUPID(upid)
	var lines []struct {
		N int    `json:"n"`
		T string `json:"t"`
	}
	q := url.Values{"start": {"0"}, "limit": {"5000"}}
	if err := c.Get(ctx, fmt.Sprintf("/nodes/%s/tasks/%s/log", url.PathEscape(node), url.PathEscape(upid)), q, &lines); err != nil {
		return nil
	}
	sort.Slice(lines, func(i, j int) bool { return lines[i].N < lines[j].N })
	out := make([]string, 0, n)
	for _, l := range lines {
		if t := strings.TrimSpace(l.T); t != "" && t != "no content" {
			out = append(out, t)
		}
	}
	if len(out) > n {
		out = out[len(out)-n:]
	}
	return out
}
