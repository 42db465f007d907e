// Package apigate is the API gate the substrate puts in front of PVE's API
// (docs/adr/0018-api-gate.md): it holds each tenant's calls to a rate, a burst and a number in
// flight before they reach pveproxy, whose three workers every tenant and the substrate share.
//
// A call is charged to the principal its credential names (a token's or a ticket's user) only
// once PVE has accepted that credential; until then it is charged to the client's address, so a
// caller that forges another tenant's token id spends its own allowance, not that tenant's.
package apigate
