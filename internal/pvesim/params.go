package pvesim

// Request parameters as PVE reads them: query string plus a form or JSON body.

import (
	"encoding/json"
	"fmt"
	"io"
	"mime"
	"net/http"
	"net/url"
	"strings"
)

// parseParams merges the query string and a form or JSON body, PVE style.
func parseParams(r *http.Request) (Params, error) {
	out := Params{}
	if r.Body != nil && (r.Method == "POST" || r.Method == "PUT") {
		b, err := io.ReadAll(io.LimitReader(r.Body, 8<<20))
		if err != nil {
			return nil, fmt.Errorf("read body: %w", err)
		}
		ct, _, _ := mime.ParseMediaType(r.Header.Get("Content-Type"))
		if len(b) > 0 {
			if ct == "application/json" {
				if err := parseJSONBody(b, out); err != nil {
					return nil, &apiError{Status: 400, Message: fmt.Sprintf("malformed JSON body: %v\n", err)}
				}
			} else {
				if err := parseForm(string(b), out); err != nil {
					return nil, &apiError{Status: 400, Message: fmt.Sprintf("malformed form body: %v\n", err)}
				}
			}
		}
	}
	q := Params{}
	if err := parseForm(r.URL.RawQuery, q); err != nil {
		return nil, &apiError{Status: 400, Message: fmt.Sprintf("malformed query: %v\n", err)}
	}
	for k, v := range q { // query overrides the body
		out[k] = v
	}
	return out, nil
}

// parseForm decodes x-www-form-urlencoded: '+' is a space, a repeated key is
// an array, and an empty value counts as absent.
func parseForm(raw string, out Params) error {
	vals, err := url.ParseQuery(raw)
	if err != nil {
		return err
	}
	for k, vs := range vals {
		var keep []string
		for _, v := range vs {
			if v != "" {
				keep = append(keep, v)
			}
		}
		switch len(keep) {
		case 0:
		case 1:
			out[k] = keep[0]
		default:
			out[k] = keep
		}
	}
	return nil
}

// parseJSONBody accepts an object whose values are scalars or arrays.
// Booleans become 1/0 as PVE's JSON path accepts true/false.
func parseJSONBody(b []byte, out Params) error {
	var m map[string]any
	dec := json.NewDecoder(strings.NewReader(string(b)))
	dec.UseNumber()
	if err := dec.Decode(&m); err != nil {
		return err
	}
	for k, v := range m {
		switch x := v.(type) {
		case nil:
		case []any:
			var arr []string
			for _, it := range x {
				arr = append(arr, jsonScalar(it))
			}
			out[k] = arr
		default:
			out[k] = jsonScalar(x)
		}
	}
	return nil
}

func jsonScalar(v any) string {
	switch x := v.(type) {
	case bool:
		if x {
			return "1"
		}
		return "0"
	case json.Number:
		return x.String()
	case string:
		return x
	case nil:
		return ""
	}
	b, _ := json.Marshal(v)
	return string(b)
}

// ---- tasks ----

const maxTasks = 5000
