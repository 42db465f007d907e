package apigate

import (
	"crypto/sha256"
	"net/http"
	"strings"
)

// credential is what a call authenticates with, as PVE reads it: an API token in the
// Authorization header (PVEAPIToken=USER@REALM!NAME=SECRET) or a ticket in the PVEAuthCookie
// cookie (PVE:USER@REALM:...). Only the user and a digest are kept: the secret itself never
// leaves the request.
type credential struct {
	user   string
	digest [sha256.Size]byte
}

// credentialOf reads r's credential; ok is false for a call without one (a login, the index).
func credentialOf(r *http.Request) (credential, bool) {
	if h := r.Header.Get("Authorization"); h != "" {
		if rest, ok := strings.CutPrefix(h, "PVEAPIToken="); ok {
			id, _, hasSecret := strings.Cut(rest, "=")
			user, _, hasName := strings.Cut(id, "!")
			if hasSecret && hasName && user != "" {
				return credential{user: user, digest: sha256.Sum256([]byte(h))}, true
			}
		}
		// Anything else is no credential PVE knows; it answers 401, charged as unverified.
		return credential{digest: sha256.Sum256([]byte(h))}, true
	}
	if c, err := r.Cookie("PVEAuthCookie"); err == nil && c.Value != "" {
		parts := strings.SplitN(c.Value, ":", 3)
		if len(parts) == 3 && parts[0] == "PVE" {
			return credential{user: parts[1], digest: sha256.Sum256([]byte(c.Value))}, true
		}
		return credential{digest: sha256.Sum256([]byte(c.Value))}, true
	}
	return credential{}, false
}
