package pvesim

// Ticket login (POST /access/ticket, pve-access-control src/PVE/API2/AccessControl.pm
// create_ticket): a user with a password gets a ticket, sent back as the PVEAuthCookie cookie, and
// a CSRFPreventionToken that every write made with the ticket carries as a header.
//
// Not modelled (docs/pvesim.md "Fidelity"): realms' own password stores (a pam user's password is
// kept by pvesim like a pve user's), TFA, renewing a ticket by passing it as the password,
// verify_auth (path and privs), and tickets outliving the process (they are in memory only).

import (
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/hex"
	"fmt"
	"net/http"
	"strings"
	"time"
)

// ticketLifetime is how long PVE accepts a ticket (AccessControl.pm verify_ticket: two hours).
const ticketLifetime = 2 * time.Hour

// ticket is one issued ticket: whose, when, and the CSRF token its writes must carry.
type ticket struct {
	user   string
	issued time.Time
	csrf   string
}

func (s *Server) ticketRoutes() routes {
	return routes{"POST /access/ticket": s.ticketCreate}
}

// hashPassword is the stored form of a password: a random salt and the SHA-256 of salt+password,
// so the state file does not hold the password itself.
func hashPassword(pw string) (string, error) {
	salt := make([]byte, 16)
	if _, err := rand.Read(salt); err != nil {
		return "", fmt.Errorf("password salt: %w", err)
	}
	sum := sha256.Sum256(append(salt, pw...))
	return hex.EncodeToString(salt) + "$" + hex.EncodeToString(sum[:]), nil
}

func passwordMatches(stored, pw string) bool {
	saltHex, sumHex, ok := strings.Cut(stored, "$")
	salt, err := hex.DecodeString(saltHex)
	if !ok || err != nil {
		return false
	}
	sum := sha256.Sum256(append(salt, pw...))
	return subtle.ConstantTimeCompare([]byte(hex.EncodeToString(sum[:])), []byte(sumHex)) == 1
}

func randomHex(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

// ticketCreate checks the user's password and issues a ticket. Every failure is the same 401
// "authentication failure", as PVE answers so as not to tell which users exist.
func (s *Server) ticketCreate(r *reqCtx) (any, error) {
	user := r.params.Str("username")
	if realm := r.params.Str("realm"); realm != "" {
		user += "@" + realm
	}
	fail := &apiError{Status: 401, Message: "authentication failure\n"}
	u := s.st.Users[user]
	now := time.Now()
	if u == nil || !u.Enable || (u.Expire != 0 && u.Expire < now.Unix()) || u.Password == "" ||
		!passwordMatches(u.Password, r.params.Str("password")) {
		return nil, fail
	}
	if r.params.Has("path") || r.params.Has("privs") || r.params.Has("otp") || r.params.Has("tfa-challenge") {
		// verify_auth and TFA are not modelled: refused, never a ticket that checked nothing
		return nil, &apiError{Status: 501, Message: "Method 'POST /access/ticket' with path, privs, otp or tfa-challenge not implemented\n"}
	}
	t := fmt.Sprintf("PVE:%s:%08X::%s", user, now.Unix(), randomHex(32))
	csrf := fmt.Sprintf("%08X:%s", now.Unix(), randomHex(16))
	if s.tickets == nil {
		s.tickets = map[string]ticket{}
	}
	s.tickets[t] = ticket{user: user, issued: now, csrf: csrf}
	return map[string]any{"username": user, "ticket": t, "CSRFPreventionToken": csrf,
		"cap": s.st.apiCaps(principal{User: user})}, nil
}

// ticketAuth authenticates a request by its PVEAuthCookie; ok is false when it has none. A write
// must carry the ticket's CSRFPreventionToken (PVE: 401 "Permission denied - invalid csrf token").
// Called with s.mu held.
func (s *Server) ticketAuth(r *http.Request) (principal, bool, error) {
	c, err := r.Cookie("PVEAuthCookie")
	if err != nil {
		return principal{}, false, nil
	}
	fail := &apiError{Status: 401, Message: "Authentication failed!\n"}
	t, ok := s.tickets[c.Value]
	if !ok || time.Since(t.issued) > ticketLifetime {
		return principal{}, true, fail
	}
	u := s.st.Users[t.user]
	if u == nil || !u.Enable || (u.Expire != 0 && u.Expire < time.Now().Unix()) {
		return principal{}, true, fail
	}
	if r.Method != http.MethodGet && r.Header.Get("CSRFPreventionToken") != t.csrf {
		return principal{}, true, &apiError{Status: 401, Message: "Permission denied - invalid csrf token\n"}
	}
	return principal{User: t.user}, true, nil
}

// apiCaps is the ticket's "cap": RPCEnvironment.pm compute_api_permission, the privileges of each
// area the GUI shows, from the fixed paths and those the ACLs name.
func (st *state) apiCaps(p principal) map[string]map[string]int {
	areas := map[string]func(string) bool{
		"vms": func(pv string) bool { return strings.HasPrefix(pv, "VM.") || pv == "Permissions.Modify" },
		"access": func(pv string) bool {
			return strings.HasPrefix(pv, "User.") || strings.HasPrefix(pv, "Group.") || pv == "Permissions.Modify"
		},
		"storage": func(pv string) bool { return strings.HasPrefix(pv, "Datastore.") || pv == "Permissions.Modify" },
		"nodes":   func(pv string) bool { return strings.HasPrefix(pv, "Sys.") || pv == "Permissions.Modify" },
		"sdn":     func(pv string) bool { return strings.HasPrefix(pv, "SDN.") || pv == "Permissions.Modify" },
		"dc": func(pv string) bool {
			return pv == "Sys.Audit" || pv == "Sys.Modify" || strings.HasPrefix(pv, "SDN.")
		},
		"mapping": func(pv string) bool { return strings.HasPrefix(pv, "Mapping.") || pv == "Permissions.Modify" },
	}
	out := map[string]map[string]int{}
	for a := range areas {
		out[a] = map[string]int{}
	}
	paths := []string{"/", "/nodes", "/access/groups", "/vms", "/storage", "/sdn", "/mapping"}
	for _, a := range st.ACLs {
		paths = append(paths, a.Path)
	}
	for _, path := range paths {
		top := "dc"
		if segs := splitPath(path); len(segs) > 0 {
			top = segs[0]
		}
		for pv := range st.privs(p, path) {
			if top == "pool" {
				switch {
				case strings.HasPrefix(pv, "VM."):
					out["vms"][pv] = 1
				case strings.HasPrefix(pv, "Datastore."):
					out["storage"][pv] = 1
				case pv == "Permissions.Modify":
					out["storage"][pv], out["vms"][pv] = 1, 1
				}
				continue
			}
			if in := areas[top]; in != nil && in(pv) {
				out[top][pv] = 1
			}
		}
	}
	return out
}
