package inspect

import (
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/attune-dev/attune/store"
)

// The page, its modules and the API answer only under the run's token and
// only to a loopback Host; the modules come from the binary.
func TestServerTokenAndLoopback(t *testing.T) {
	st := store.NewMemory()
	recordSession(t, st)
	srv := NewServer(st, "tok", nil)
	get := func(host, path string) (int, string, string) {
		r := httptest.NewRequest("GET", path, nil)
		r.Host = host
		w := httptest.NewRecorder()
		srv.ServeHTTP(w, r)
		b, _ := io.ReadAll(w.Result().Body)
		return w.Code, w.Header().Get("Content-Type"), string(b)
	}
	for _, c := range []struct {
		host, path string
		code       int
	}{
		{"127.0.0.1:9", "/tok/", 200},
		{"localhost:9", "/tok/assets/app.js", 200},
		{"[::1]:9", "/tok/api/sessions", 200},
		{"127.0.0.1:9", "/", 403},
		{"127.0.0.1:9", "/assets/app.js", 403},
		{"127.0.0.1:9", "/tok2/", 403},
		{"127.0.0.1:9", "/api/sessions", 403},
		{"evil.example:9", "/tok/api/sessions", 403},
		{"127.0.0.1:9", "/tok/api/session?id=nope", 404},
	} {
		if code, _, body := get(c.host, c.path); code != c.code {
			t.Errorf("%s %s: %d, want %d: %s", c.host, c.path, code, c.code, body)
		}
	}
	if _, ct, body := get("127.0.0.1", "/tok/assets/app.js"); ct != "text/javascript; charset=utf-8" || !strings.Contains(body, `from "./view.js"`) {
		t.Errorf("app.js: %s\n%s", ct, body)
	}
	if _, _, body := get("127.0.0.1", "/tok/"); !strings.Contains(body, `<script type="module" src="assets/app.js">`) || strings.Contains(body, "http") {
		t.Errorf("index.html loads something not its own:\n%s", body)
	}
	_, _, body := get("127.0.0.1", "/tok/api/session?id=claude/s1&offset=4&limit=1")
	var page Timeline
	if err := json.Unmarshal([]byte(body), &page); err != nil {
		t.Fatal(err)
	}
	if page.Total != 6 || page.Offset != 4 || len(page.Events) != 1 || page.Events[0].RefusedAt != "protect.lua:2" {
		t.Fatalf("page %+v", page)
	}
}

func TestCheckListen(t *testing.T) {
	for _, ok := range []string{"127.0.0.1:0", "localhost:8788", "[::1]:80"} {
		if err := CheckListen(ok); err != nil {
			t.Errorf("%s: %v", ok, err)
		}
	}
	for _, bad := range []string{"0.0.0.0:8788", ":8788", "192.168.1.2:80", "example.com:80", "127.0.0.1"} {
		var le *ListenError
		if err := CheckListen(bad); !errors.As(err, &le) {
			t.Errorf("%s: %v", bad, err)
		}
	}
}

var _ http.Handler = (*Server)(nil)
