package version

import (
	"runtime/debug"
	"strings"
	"testing"
)

func TestFromBuildInfo(t *testing.T) {
	for name, tc := range map[string]struct {
		bi   debug.BuildInfo
		want string
	}{
		"release": {debug.BuildInfo{Main: debug.Module{Version: "v0.4.0"}}, "v0.4.0"},
		"pseudo":  {debug.BuildInfo{Main: debug.Module{Version: "v0.0.0-20261130195000-0123456789ab"}}, "v0.0.0-20261130195000-0123456789ab"},
		"devel":   {debug.BuildInfo{Main: debug.Module{Version: "(devel)"}}, "devel"},
		"vcs": {debug.BuildInfo{Main: debug.Module{Version: "(devel)"}, Settings: []debug.BuildSetting{
			{Key: "vcs.revision", Value: "4fc9cd2d0a1b2c3d4e5f60718293a4b5c6d7e8f9"}, {Key: "vcs.modified", Value: "false"}}}, "devel+4fc9cd2d0a1b"},
		"dirty": {debug.BuildInfo{Settings: []debug.BuildSetting{
			{Key: "vcs.revision", Value: "4fc9cd2"}, {Key: "vcs.modified", Value: "true"}}}, "devel+4fc9cd2-dirty"},
	} {
		if got := fromBuildInfo(&tc.bi); got != tc.want {
			t.Errorf("%s: got %q, want %q", name, got, tc.want)
		}
	}
}

func TestStringAndLinkTimeVersion(t *testing.T) {
	if s := String(); s == "" || strings.Contains(s, " ") {
		t.Fatalf("String() = %q", s)
	}
	old := Version
	defer func() { Version = old }()
	Version = "v9.8.7"
	if got := String(); got != "v9.8.7" {
		t.Fatalf("with -X Version: got %q", got)
	}
	if got := CreatedBy("profile-1"); got != "parqdb version v9.8.7 (build profile-1)" {
		t.Fatalf("CreatedBy: %q", got)
	}
}
