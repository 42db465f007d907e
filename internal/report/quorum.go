package report

// The cluster's quorum as PVE's API shows it (docs/adr/0015-quorum.md): /cluster/status (quorate,
// each node online), /cluster/config/nodes (each node's quorum_votes), /cluster/config/qdevice
// (corosync-qdevice's state). The votes are votequorum's: expected = the nodes' votes plus the
// QDevice's (ffsplit 1, lms sum-1: corosync-qdevice.8), quorum = floor(expected/2)+1.

import (
	"errors"
	"fmt"
	"strings"

	"github.com/deevnet/tenant/internal/pve"
)

// Quorum is the cluster's quorum as read back. Err says why it could not be read (a tenant's
// token has no Sys.Audit on /): the rest of the report does not depend on it.
type Quorum struct {
	Quorate  bool           `json:"quorate"`
	Expected int            `json:"expected_votes"`
	Total    int            `json:"total_votes"`
	Needed   int            `json:"quorum"`
	Nodes    []QuorumNode   `json:"nodes"`
	QDevice  *QDeviceStatus `json:"qdevice,omitempty"`
	Err      string         `json:"error,omitempty"`
}

// QuorumNode is a member's vote.
type QuorumNode struct {
	Name   string `json:"name"`
	NodeID int    `json:"nodeid"`
	Votes  int    `json:"votes"`
	Online bool   `json:"online"`
}

// QDeviceStatus is corosync-qdevice's status as PVE relays it.
type QDeviceStatus struct {
	Host      string `json:"host"`
	Algorithm string `json:"algorithm"`
	State     string `json:"state"`
	Votes     int    `json:"votes"`
}

// readQuorum reads the quorum with r's client; a failure is kept in Err, not in r.err.
func readQuorum(r *reader) *Quorum {
	if r.err != nil {
		return nil
	}
	q := &Quorum{}
	online := map[string]bool{} // from /cluster/status
	var st, nodes []row
	var qd row
	err := errors.Join(r.c.Get(r.ctx, "/cluster/status", nil, &st), r.c.Get(r.ctx, "/cluster/config/nodes", nil, &nodes),
		r.c.Get(r.ctx, "/cluster/config/qdevice", nil, &qd))
	if err != nil {
		q.Err = fmt.Sprintf("not read: %v", err)
		var ae *pve.APIError
		if errors.As(err, &ae) && ae.Status == 403 {
			q.Err = "not readable with this credential (Sys.Audit on / is needed)"
		}
		return q
	}
	for _, x := range st {
		switch str(x["type"]) {
		case "cluster":
			q.Quorate = str(x["quorate"]) == "1"
		case "node":
			online[str(x["name"])] = str(x["online"]) == "1"
		}
	}
	sum := 0
	for _, x := range nodes {
		n := QuorumNode{Name: str(x["node"]), NodeID: atoi(x["nodeid"]), Votes: atoi(x["quorum_votes"]), Online: online[str(x["node"])]}
		sum += n.Votes
		if n.Online {
			q.Total += n.Votes
		}
		q.Nodes = append(q.Nodes, n)
	}
	q.Expected = sum
	if len(qd) > 0 {
		d := &QDeviceStatus{Host: str(qd["QNetd host"]), Algorithm: str(qd["Algorithm"]), State: str(qd["State"]), Votes: 1}
		if d.Algorithm == "LMS" {
			d.Votes = sum - 1
		}
		q.Expected += d.Votes
		if d.State == "Connected" {
			q.Total += d.Votes
		}
		q.QDevice = d
	}
	q.Needed = q.Expected/2 + 1
	return q
}

// markdownQuorum writes the Quorum section: quorate or not, the votes, each member's and the QDevice's.
func markdownQuorum(b *strings.Builder, q *Quorum) {
	if q == nil {
		return
	}
	b.WriteString("\n## Quorum\n\n")
	if q.Err != "" {
		fmt.Fprintf(b, "Quorum %s.\n", md(q.Err))
		return
	}
	state := "**NOT quorate**: /etc/pve is read-only, every write of a run fails"
	if q.Quorate {
		state = "quorate"
	}
	fmt.Fprintf(b, "The cluster is %s: %d of %d expected votes, quorum %d.\n\n| member | node id | votes | online |\n|---|---|---|---|\n",
		state, q.Total, q.Expected, q.Needed)
	for _, n := range q.Nodes {
		fmt.Fprintf(b, "| %s | %d | %d | %s |\n", md(n.Name), n.NodeID, n.Votes, yesNo(n.Online))
	}
	if d := q.QDevice; d != nil {
		fmt.Fprintf(b, "| QDevice %s (%s) | | %d | %s |\n", md(d.Host), md(d.Algorithm), d.Votes, md(d.State))
	} else {
		b.WriteString("\nNo QDevice.\n")
	}
}

func yesNo(b bool) string {
	if b {
		return "yes"
	}
	return "**no**"
}
