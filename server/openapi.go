package server

import _ "embed"

// OpenAPI is the OpenAPI 3.1 document of the HTTP API, served at
// /openapi.yaml. The file server/openapi.yaml is its source.
//
//go:embed openapi.yaml
var OpenAPI []byte
