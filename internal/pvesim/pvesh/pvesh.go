// Package pvesh is pvesim's stand-in for PVE's `pvesh` on a node: what a hookscript pvesim runs
// finds on its PATH, so that a script written for a real node (cmd/envelope_guard) runs unchanged
// against the simulator. A real node's pvesh calls the API in-process as root@pam; this one calls
// the simulator over HTTP as root@pam, with the node's credential pvesim gives the script.
package pvesh

import (
	"bytes"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"strings"
	"time"
)

// The environment pvesim sets for a hookscript.
const (
	EnvURL  = "PVESIM_URL"  // https://127.0.0.1:PORT
	EnvAuth = "PVESIM_AUTH" // the Authorization header: root@pam's on the node (Server.NodeRootAuth)
	EnvCA   = "PVESIM_CA"   // the CA's PEM file; empty over plain HTTP
)

var methods = map[string]string{"get": http.MethodGet, "ls": http.MethodGet, "set": http.MethodPut, "create": http.MethodPost, "delete": http.MethodDelete}

// Main runs `pvesh <get|ls|set|create|delete> <path> [--<param> <value>]... [--output-format json]`
// and returns the exit status. The answer's data is printed as JSON (the only output format a
// script can parse, and the one cmd/envelope_guard asks for); a refusal is printed on stderr.
func Main(args []string, getenv func(string) string, stdout, stderr io.Writer) int {
	if err := run(args, getenv, stdout); err != nil {
		_, _ = fmt.Fprintln(stderr, err)
		return 255
	}
	return 0
}

func run(args []string, getenv func(string) string, stdout io.Writer) error {
	if len(args) < 2 || methods[args[0]] == "" {
		return fmt.Errorf("usage: pvesh <get|ls|set|create|delete> <api_path> [OPTIONS]")
	}
	method, path := methods[args[0]], "/"+strings.Trim(args[1], "/")
	params := url.Values{}
	for rest := args[2:]; len(rest) > 0; rest = rest[2:] {
		key, ok := strings.CutPrefix(rest[0], "--")
		if !ok || len(rest) < 2 {
			return fmt.Errorf("option %q: want --<name> <value>", rest[0])
		}
		if key == "output-format" {
			if rest[1] != "json" && rest[1] != "json-pretty" {
				return fmt.Errorf("--output-format %s: pvesim's pvesh prints json only", rest[1])
			}
			continue
		}
		params.Add(key, rest[1])
	}
	base, auth := getenv(EnvURL), getenv(EnvAuth)
	if base == "" || auth == "" {
		return fmt.Errorf("%s and %s must be set (pvesim sets them for the hookscripts it runs)", EnvURL, EnvAuth)
	}
	hc, err := client(getenv(EnvCA))
	if err != nil {
		return err
	}
	u, body := base+"/api2/json"+path, io.Reader(nil)
	if method == http.MethodGet || method == http.MethodDelete {
		u += "?" + params.Encode()
	} else {
		body = strings.NewReader(params.Encode())
	}
	req, err := http.NewRequest(method, u, body)
	if err != nil {
		return err
	}
	req.Header.Set("Authorization", auth)
	if body != nil {
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	}
	resp, err := hc.Do(req)
	if err != nil {
		return fmt.Errorf("%s %s: %w", method, path, err)
	}
	defer func() { _ = resp.Body.Close() }()
	var answer struct {
		Data    json.RawMessage   `json:"data"`
		Message string            `json:"message"`
		Errors  map[string]string `json:"errors"`
	}
	raw, err := io.ReadAll(resp.Body)
	if err != nil {
		return fmt.Errorf("%s %s: %w", method, path, err)
	}
	if resp.StatusCode != http.StatusOK {
		_ = json.Unmarshal(raw, &answer)
		msg := strings.TrimSpace(answer.Message)
		if msg == "" { // PVE's message is also the status line's reason
			_, msg, _ = strings.Cut(resp.Status, " ")
		}
		for k, v := range answer.Errors {
			msg += fmt.Sprintf("\n%s: %s", k, v)
		}
		return fmt.Errorf("%s", msg)
	}
	if err := json.Unmarshal(raw, &answer); err != nil {
		return fmt.Errorf("%s %s: not a PVE answer: %w", method, path, err)
	}
	var out bytes.Buffer
	if len(answer.Data) == 0 {
		answer.Data = json.RawMessage("null")
	}
	if err := json.Compact(&out, answer.Data); err != nil {
		return err
	}
	out.WriteByte('\n')
	_, err = stdout.Write(out.Bytes())
	return err
}

func client(caFile string) (*http.Client, error) {
	t := &http.Transport{}
	if caFile != "" {
		pem, err := os.ReadFile(caFile)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", EnvCA, err)
		}
		pool := x509.NewCertPool()
		if !pool.AppendCertsFromPEM(pem) {
			return nil, fmt.Errorf("%s %s: no certificate", EnvCA, caFile)
		}
		t.TLSClientConfig = &tls.Config{RootCAs: pool}
	}
	return &http.Client{Timeout: time.Minute, Transport: t}, nil
}
