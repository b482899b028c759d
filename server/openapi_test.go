package server_test

import (
	"bytes"
	"fmt"
	"net/http"
	"sort"
	"strconv"
	"strings"
	"testing"

	"go.yaml.in/yaml/v2"

	"github.com/parqdb/parqdb/server"
	"github.com/parqdb/parqdb/server/serving"
)

type openAPIOp struct {
	OperationID string
	Responses   map[string]bool
}

// parseOpenAPI returns the document's operations by path and method.
func parseOpenAPI(t *testing.T) map[string]map[string]openAPIOp {
	t.Helper()
	var doc struct {
		Paths map[string]map[string]interface{} `yaml:"paths"`
	}
	if err := yaml.Unmarshal(server.OpenAPI, &doc); err != nil {
		t.Fatalf("openapi.yaml: %v", err)
	}
	out := map[string]map[string]openAPIOp{}
	for p, ops := range doc.Paths {
		out[p] = map[string]openAPIOp{}
		for m, v := range ops {
			if m == "parameters" {
				continue
			}
			fields, _ := v.(map[interface{}]interface{})
			op := openAPIOp{Responses: map[string]bool{}}
			op.OperationID, _ = fields["operationId"].(string)
			resp, _ := fields["responses"].(map[interface{}]interface{})
			for code := range resp {
				op.Responses[fmt.Sprint(code)] = true
			}
			out[p][m] = op
		}
	}
	return out
}

// TestOpenAPIMatchesRoutes: the document describes exactly the server's
// routes and methods, every operation has a unique operationId, and every
// status the server answers a route with (driven here, one request per
// status) is declared for that route.
func TestOpenAPIMatchesRoutes(t *testing.T) {
	paths := parseOpenAPI(t)
	tok, err := serving.NewToken("openapi-token")
	if err != nil {
		t.Fatal(err)
	}
	f := newFixture(t, server.Config{Token: tok, Limits: serving.Limits{MaxBodyBytes: 1 << 16}})
	f.token = "openapi-token"
	vec := strings.Repeat("0.1, ", f.dim-1) + "0.1"
	type call struct {
		path, method, body, auth, ctype string
		status                          int
	}
	const (
		search = "/v1/indexes/{name}/search"
		calib  = "/v1/indexes/{name}/calibration"
		bearer = "Bearer openapi-token"
	)
	routes := map[string]string{ // documented path → the server's method
		"/healthz": "get", "/readyz": "get", "/openapi.yaml": "get", "/metrics": "get",
		"/v1/indexes": "get", "/v1/indexes/{name}": "get", search: "post", calib: "get", "/console/": "get",
	}
	calls := []call{
		{"/healthz", "GET", "", "", "", 200},
		{"/readyz", "GET", "", "", "", 200},
		{"/openapi.yaml", "GET", "", "", "", 200},
		{"/metrics", "GET", "", bearer, "", 200},
		{"/metrics", "GET", "", "", "", 401},
		{"/v1/indexes", "GET", "", bearer, "", 200},
		{"/v1/indexes", "GET", "", "", "", 401},
		{"/v1/indexes/words", "GET", "", bearer, "", 200},
		{"/v1/indexes/nope", "GET", "", bearer, "", 404},
		{"/v1/indexes/words", "GET", "", "", "", 401},
		{"/v1/indexes/words/search", "POST", `{"vector": [` + vec + `], "k": 3}`, bearer, "application/json", 200},
		{"/v1/indexes/words/search", "POST", `{"k": `, bearer, "application/json", 400},
		{"/v1/indexes/words/search", "POST", `{"key": "king"}`, "", "application/json", 401},
		{"/v1/indexes/nope/search", "POST", `{"key": "king"}`, bearer, "application/json", 404},
		{"/v1/indexes/words/search", "POST", `{"key": "` + strings.Repeat("x", 1<<17) + `"}`, bearer, "application/json", 413},
		{"/v1/indexes/words/search", "POST", `{"key": "king"}`, bearer, "text/plain", 415},
		{"/v1/indexes/words/calibration", "GET", "", bearer, "", 200},
		{"/v1/indexes/words/calibration?target=2", "GET", "", bearer, "", 400},
		{"/v1/indexes/words/calibration", "GET", "", "", "", 401},
		{"/v1/indexes/nope/calibration", "GET", "", bearer, "", 404},
		{"/console/", "GET", "", "", "", 200},
		{"/console/nope.js", "GET", "", "", "", 404},
	}
	for p, m := range routes {
		wrong := "POST"
		if m == "post" {
			wrong = "GET"
		}
		concrete := strings.ReplaceAll(p, "{name}", "words")
		calls = append(calls, call{concrete, wrong, "", bearer, "", 405})
	}
	for _, c := range calls {
		req, err := http.NewRequest(c.method, f.url+c.path, bytes.NewReader([]byte(c.body)))
		if err != nil {
			t.Fatal(err)
		}
		if c.auth != "" {
			req.Header.Set("Authorization", c.auth)
		}
		if c.ctype != "" {
			req.Header.Set("Content-Type", c.ctype)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != c.status {
			t.Errorf("%s %s: %d, want %d", c.method, c.path, resp.StatusCode, c.status)
			continue
		}
		tmpl, _, _ := strings.Cut(c.path, "?")
		switch {
		case strings.HasPrefix(tmpl, "/console/"):
			tmpl = "/console/"
		case strings.HasPrefix(tmpl, "/v1/indexes/") && strings.HasSuffix(tmpl, "/search"):
			tmpl = search
		case strings.HasPrefix(tmpl, "/v1/indexes/") && strings.HasSuffix(tmpl, "/calibration"):
			tmpl = calib
		case strings.HasPrefix(tmpl, "/v1/indexes/"):
			tmpl = "/v1/indexes/{name}"
		}
		op, ok := paths[tmpl][routes[tmpl]]
		if !ok {
			t.Errorf("%s %s: no such operation in openapi.yaml", routes[tmpl], tmpl)
			continue
		}
		if !op.Responses[strconv.Itoa(c.status)] {
			t.Errorf("%s %s answers %d, which openapi.yaml does not declare", c.method, tmpl, c.status)
		}
	}
	var docRoutes, serverRoutes []string
	ids := map[string]string{}
	for p, ops := range paths {
		for m, op := range ops {
			docRoutes = append(docRoutes, m+" "+p)
			if op.OperationID == "" {
				t.Errorf("%s %s has no operationId", m, p)
			} else if prev, dup := ids[op.OperationID]; dup {
				t.Errorf("operationId %s is used by %s and %s %s", op.OperationID, prev, m, p)
			}
			ids[op.OperationID] = m + " " + p
		}
	}
	for p, m := range routes {
		serverRoutes = append(serverRoutes, m+" "+p)
	}
	sort.Strings(docRoutes)
	sort.Strings(serverRoutes)
	if strings.Join(docRoutes, "; ") != strings.Join(serverRoutes, "; ") {
		t.Errorf("openapi.yaml operations %v, server routes %v", docRoutes, serverRoutes)
	}
}
