package main

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"io"
	"net/http"
	"os"
	"sort"
	"strings"
	"sync"
	"time"
)

// flood is the API flood (issue 53, docs/adr/0018-api-gate.md): conns callers send the tenant's
// token to its attachment's API, as fast as each gets an answer, until ctx ends; it prints how
// many calls got each status. It honours no Retry-After: a flood does not wait its turn.
func flood(ctx context.Context, a attachment, conns int) error {
	tlsConf := &tls.Config{MinVersion: tls.VersionTLS12}
	if a.PVE.CAPath != "" {
		pem, err := os.ReadFile(a.PVE.CAPath)
		if err != nil {
			return fmt.Errorf("ca_path: %w", err)
		}
		tlsConf.RootCAs = x509.NewCertPool()
		tlsConf.RootCAs.AppendCertsFromPEM(pem)
	}
	hc := &http.Client{Transport: &http.Transport{TLSClientConfig: tlsConf, MaxIdleConnsPerHost: conns}, Timeout: 30 * time.Second}
	url := fmt.Sprintf("https://%s:%d/api2/json/cluster/resources?type=vm", a.PVE.Host, a.PVE.Port)
	auth := fmt.Sprintf("PVEAPIToken=%s!%s=%s", a.PVE.User, a.PVE.TokenID, a.PVE.Secret)
	var mu sync.Mutex
	counts := map[string]int{}
	var wg sync.WaitGroup
	start := time.Now()
	for range conns {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for ctx.Err() == nil {
				req, _ := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
				req.Header.Set("Authorization", auth)
				res, err := hc.Do(req)
				key := "error"
				if err == nil {
					_, _ = io.Copy(io.Discard, res.Body)
					_ = res.Body.Close()
					key = fmt.Sprint(res.StatusCode)
				}
				if ctx.Err() != nil {
					return
				}
				mu.Lock()
				counts[key]++
				mu.Unlock()
				if key == "429" {
					// The gate's refusals cost nothing upstream; the pause only keeps this machine's two
					// cores for the converge being timed (a real flood comes from elsewhere).
					time.Sleep(20 * time.Millisecond)
				}
			}
		}()
	}
	wg.Wait()
	secs := time.Since(start).Seconds()
	keys := make([]string, 0, len(counts))
	total := 0
	for k, n := range counts {
		keys = append(keys, fmt.Sprintf("%s=%d", k, n))
		total += n
	}
	sort.Strings(keys)
	fmt.Printf("flood: %d calls in %.1f s (%.0f a second) from %d callers: %s\n", total, secs, float64(total)/secs, conns, strings.Join(keys, " "))
	return nil
}
