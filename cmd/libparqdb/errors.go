package main

import (
	"context"
	"encoding/json"
	"errors"

	"github.com/parqdb/parqdb/catalog"
	"github.com/parqdb/parqdb/indexer"
	"github.com/parqdb/parqdb/lifecycle"
	"github.com/parqdb/parqdb/server/serving"
	"github.com/parqdb/parqdb/verify"
)

// Codes the C API adds to the HTTP API's (serving.Code…): they have no HTTP
// request to answer.
const (
	// codeCancelled: the call's task was cancelled (Python: Ctrl-C).
	codeCancelled = "cancelled"
	// codeNoWarehouse: the warehouse or its catalog does not exist.
	codeNoWarehouse = "warehouse_not_found"
)

// apiError is the JSON of a failed call.
type apiError struct {
	Code    string `json:"code"`
	Message string `json:"message"`
}

// classify gives err its stable code: the HTTP API's classification
// (serving.AsError) for everything a search or a catalog can fail with,
// after the few cases only a library caller meets: cancellation, a missing
// warehouse, and the option errors of the build and lifecycle calls, which
// the server never makes.
func classify(err error) apiError {
	var nw *catalog.NoWarehouseError
	switch {
	case errors.Is(err, context.Canceled):
		return apiError{codeCancelled, err.Error()}
	case errors.As(err, &nw):
		return apiError{codeNoWarehouse, err.Error()}
	case errors.Is(err, indexer.ErrOptions), errors.Is(err, lifecycle.ErrOptions), errors.Is(err, verify.ErrOptions):
		return apiError{serving.CodeInvalidArgument, err.Error()}
	}
	e := serving.AsError(err)
	return apiError{e.Code, e.Message}
}

func errorJSON(err error) []byte {
	b, _ := json.Marshal(classify(err))
	return b
}
