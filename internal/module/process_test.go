package module

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"testing"

	"github.com/deevnet/tenant/internal/module/argsfile"
)

// TestMain lets the test binary act as a module: with DVT_AS_MODULE set, it runs Run and exits.
func TestMain(m *testing.M) {
	if mode := os.Getenv("DVT_AS_MODULE"); mode != "" {
		Run(Spec{Options: map[string]*Option{"secret": {NoLog: true}}}, func(m *Module) (Result, error) {
			fmt.Println("a library printing to stdout")
			if mode == "panic" {
				panic(fmt.Sprint("kaboom ", m.params["secret"]))
			}
			return Result{Changed: true, Msg: "done"}, nil
		})
	}
	os.Exit(m.Run())
}

func runAsModule(t *testing.T, mode, dir string, args map[string]any) (map[string]any, string, int) {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(exe, argsfile.Write(t, args))
	cmd.Env = append(os.Environ(), "DVT_AS_MODULE="+mode)
	cmd.Dir = dir
	// An open pipe that is never written or closed: a module that read stdin would hang.
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = w.Close() }()
	cmd.Stdin = r
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err = cmd.Run()
	_ = r.Close()
	code := 0
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatal(err)
	}
	var res map[string]any
	dec := json.NewDecoder(&stdout)
	if err := dec.Decode(&res); err != nil {
		t.Fatalf("stdout is not one JSON object: %v (%q)", err, stdout.String())
	}
	if dec.More() {
		t.Fatalf("more than one JSON value on stdout")
	}
	return res, stderr.String(), code
}

func TestProcessWritesOneObjectAndIgnoresStdin(t *testing.T) {
	res, stderr, code := runAsModule(t, "ok", t.TempDir(), map[string]any{"secret": "x1"})
	if code != 0 || res["changed"] != true || res["msg"] != "done" {
		t.Fatalf("code %d res %v", code, res)
	}
	if !strings.Contains(stderr, "a library printing to stdout") {
		t.Fatalf("stray stdout output was not diverted to stderr: %q", stderr)
	}
}

func TestProcessToleratesDeletedWorkingDirectory(t *testing.T) {
	dir := t.TempDir() + "/gone"
	if err := os.Mkdir(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	// The shell enters the directory, removes it, then execs the module inside it.
	exe, _ := os.Executable()
	args := argsfile.Write(t, map[string]any{})
	sh := exec.Command("sh", "-c", `cd "$1" && rmdir "$1" && DVT_AS_MODULE=ok exec "$2" "$3"`, "sh", dir, exe, args)
	out, err := sh.Output()
	if err != nil {
		t.Fatalf("module failed in a deleted cwd: %v %s", err, out)
	}
	var res map[string]any
	if err := json.Unmarshal(bytes.TrimSpace(out), &res); err != nil || res["failed"] != false {
		t.Fatalf("res %v err %v", res, err)
	}
}

func TestProcessPanicIsAFailedResult(t *testing.T) {
	res, stderr, code := runAsModule(t, "panic", t.TempDir(), map[string]any{"secret": "pw-in-panic"})
	if code != 1 || res["failed"] != true {
		t.Fatalf("code %d res %v", code, res)
	}
	msg := res["msg"].(string)
	if !strings.Contains(msg, "failed unexpectedly: kaboom") || strings.Contains(msg, "pw-in-panic") || strings.Contains(msg, "goroutine") {
		t.Fatalf("msg = %q", msg)
	}
	if strings.Contains(stderr, "goroutine") {
		t.Fatalf("stack trace printed: %q", stderr)
	}
}
