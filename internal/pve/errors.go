package pve

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"sort"
	"strconv"
	"strings"
	"time"
)

// APIError is a non-2xx answer of the PVE API.
type APIError struct {
	Status  int               // HTTP status: 400 parameters, 401/403 auth, 500 most failures, 501 unknown path
	Message string            // PVE's message (the body's "message", else the reason phrase), trimmed
	Errors  map[string]string // per-parameter errors of a 400, may be nil
	// RetryAfter is a 429's Retry-After (the API gate's, docs/adr/0018-api-gate.md); PVE itself
	// sends no 429.
	RetryAfter time.Duration
}

func (e *APIError) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "PVE API %d: %s", e.Status, e.Message)
	if len(e.Errors) > 0 {
		keys := make([]string, 0, len(e.Errors))
		for k := range e.Errors {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for i, k := range keys {
			sep := "; "
			if i == 0 {
				sep = " ("
			}
			fmt.Fprintf(&b, "%s%s: %s", sep, k, strings.TrimSpace(e.Errors[k]))
		}
		b.WriteString(")")
	}
	return b.String()
}

// Contains reports whether PVE's message contains s. PVE has no error codes beyond the HTTP
// status and appends " at <file> line <n>." to many messages, so callers match substrings.
func (e *APIError) Contains(s string) bool {
	return strings.Contains(e.Message, s)
}

// IsNotFound reports whether the error is PVE's way of saying an object does not exist
// (a 500 "... does not exist", since PVE does not use 404 for objects).
func (e *APIError) IsNotFound() bool {
	return e.Status == http.StatusNotFound ||
		(e.Status == http.StatusInternalServerError && strings.Contains(e.Message, "does not exist"))
}

// apiErrorFrom reads an error response. The body is the envelope {"data":null,"message":...,"errors":{...}};
// 401 has an empty body, so the reason phrase is the fallback.
func apiErrorFrom(res *http.Response) *APIError {
	e := &APIError{Status: res.StatusCode}
	if res.StatusCode == http.StatusTooManyRequests {
		if secs, err := strconv.Atoi(strings.TrimSpace(res.Header.Get("Retry-After"))); err == nil && secs >= 0 {
			e.RetryAfter = time.Duration(secs) * time.Second
		}
	}
	body, _ := io.ReadAll(io.LimitReader(res.Body, 1<<20))
	var env struct {
		Message string          `json:"message"`
		Errors  json.RawMessage `json:"errors"`
	}
	if json.Unmarshal(body, &env) == nil {
		e.Message = strings.TrimSpace(env.Message)
		if len(env.Errors) > 0 && string(env.Errors) != "null" {
			var m map[string]any
			if json.Unmarshal(env.Errors, &m) == nil && len(m) > 0 {
				e.Errors = make(map[string]string, len(m))
				for k, v := range m {
					if s, ok := v.(string); ok {
						e.Errors[k] = strings.TrimSpace(s)
					} else {
						raw, _ := json.Marshal(v)
						e.Errors[k] = string(raw)
					}
				}
			}
		}
	}
	if e.Message == "" {
		// Status is "500 reason phrase"; the phrase is the first line of PVE's message.
		e.Message = strings.TrimSpace(strings.TrimPrefix(res.Status, fmt.Sprint(res.StatusCode)))
	}
	if e.Message == "" {
		e.Message = http.StatusText(res.StatusCode)
	}
	return e
}

// TaskError is a worker task that ended with an exit status other than "OK".
type TaskError struct {
	UPID       string
	ExitStatus string   // PVE's exit status, e.g. "clone failed: ..." or "WARNINGS: 2"
	LogTail    []string // last lines of the task log, oldest first
}

func (e *TaskError) Error() string {
	msg := fmt.Sprintf("task %s failed: %s", e.UPID, e.ExitStatus)
	if len(e.LogTail) > 0 {
		msg += " (log: " + strings.Join(e.LogTail, " | ") + ")"
	}
	return msg
}
