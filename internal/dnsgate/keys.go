package dnsgate

import (
	"crypto/hmac"
	"crypto/sha1" //nolint:gosec // hmac-sha1 is a TSIG algorithm tenants may hold
	"crypto/sha256"
	"crypto/sha512"
	"encoding/base64"
	"encoding/hex"
	"hash"
	"sync"

	"github.com/miekg/dns"
)

// Key is a TSIG key; Secret is base64 and is never printed.
type Key struct {
	Name      string `yaml:"name"`
	Algorithm string `yaml:"algorithm"`
	Secret    string `yaml:"secret"`
}

// algorithm is the key's algorithm as a TSIG name (hmac-sha256 -> hmac-sha256.).
func (k Key) algorithm() string { return dns.CanonicalName(k.Algorithm) }

// keyring verifies and signs with whichever keys the gateway knows at the time of the message:
// tenants onboarded after the gateway started are known without a restart.
type keyring struct {
	mu      sync.RWMutex
	keys    map[string]Key // by canonical name
	refresh func()         // reloads the keys when their source changed; nil: never
}

func (kr *keyring) set(keys map[string]Key) {
	kr.mu.Lock()
	kr.keys = keys
	kr.mu.Unlock()
}

func (kr *keyring) get(name string) (Key, bool) {
	if kr.refresh != nil {
		kr.refresh()
	}
	kr.mu.RLock()
	defer kr.mu.RUnlock()
	k, ok := kr.keys[dns.CanonicalName(name)]
	return k, ok
}

// Generate implements dns.TsigProvider (the HMACs of RFC 8945, as miekg/dns's own provider).
func (kr *keyring) Generate(msg []byte, t *dns.TSIG) ([]byte, error) {
	k, ok := kr.get(t.Hdr.Name)
	if !ok {
		return nil, dns.ErrSecret
	}
	if dns.CanonicalName(t.Algorithm) != k.algorithm() {
		return nil, dns.ErrKeyAlg
	}
	raw, err := base64.StdEncoding.DecodeString(k.Secret)
	if err != nil {
		return nil, dns.ErrSecret
	}
	var h func() hash.Hash
	switch k.algorithm() {
	case dns.HmacSHA1:
		h = sha1.New
	case dns.HmacSHA224:
		h = sha256.New224
	case dns.HmacSHA256:
		h = sha256.New
	case dns.HmacSHA384:
		h = sha512.New384
	case dns.HmacSHA512:
		h = sha512.New
	default:
		return nil, dns.ErrKeyAlg
	}
	m := hmac.New(h, raw)
	m.Write(msg)
	return m.Sum(nil), nil
}

// Verify implements dns.TsigProvider.
func (kr *keyring) Verify(msg []byte, t *dns.TSIG) error {
	b, err := kr.Generate(msg, t)
	if err != nil {
		return err
	}
	mac, err := hex.DecodeString(t.MAC)
	if err != nil || !hmac.Equal(b, mac) {
		return dns.ErrSig
	}
	return nil
}
