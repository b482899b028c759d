// Package kubernetes_test checks the manifests of deploy/kubernetes: each
// one decodes strictly into the official Kubernetes API types (an unknown
// or misspelt field fails, as a schema validator would refuse it), and the
// pieces are wired together (the Indexed Job's index becomes --shard,
// every $(VAR) is defined, every Secret and ConfigMap key exists, the
// Service selects the serve pods). The package holds only tests, so the
// Kubernetes modules never reach the parqdb binary.
package kubernetes_test

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/yaml"
)

// objects are the decoded manifests by kind and name.
type objects struct {
	jobs        map[string]*batchv1.Job
	deployments map[string]*appsv1.Deployment
	services    map[string]*corev1.Service
	secrets     map[string]*corev1.Secret
	configMaps  map[string]*corev1.ConfigMap
}

// decode strictly decodes one YAML document into the type of its kind.
func (o *objects) decode(file string, doc []byte) error {
	var tm struct {
		APIVersion string `json:"apiVersion"`
		Kind       string `json:"kind"`
	}
	if err := yaml.Unmarshal(doc, &tm); err != nil {
		return err
	}
	strict := func(v any) error { return yaml.UnmarshalStrict(doc, v) }
	switch tm.APIVersion + " " + tm.Kind {
	case "batch/v1 Job":
		var v batchv1.Job
		if err := strict(&v); err != nil {
			return err
		}
		o.jobs[v.Name] = &v
	case "apps/v1 Deployment":
		var v appsv1.Deployment
		if err := strict(&v); err != nil {
			return err
		}
		o.deployments[v.Name] = &v
	case "v1 Service":
		var v corev1.Service
		if err := strict(&v); err != nil {
			return err
		}
		o.services[v.Name] = &v
	case "v1 Secret":
		var v corev1.Secret
		if err := strict(&v); err != nil {
			return err
		}
		o.secrets[v.Name] = &v
	case "v1 ConfigMap":
		var v corev1.ConfigMap
		if err := strict(&v); err != nil {
			return err
		}
		o.configMaps[v.Name] = &v
	default:
		return fmt.Errorf("kind %q of apiVersion %q is not one this test knows", tm.Kind, tm.APIVersion)
	}
	return nil
}

func load(t *testing.T) *objects {
	t.Helper()
	files, err := filepath.Glob("*.yaml")
	if err != nil || len(files) == 0 {
		t.Fatalf("no manifests: %v", err)
	}
	o := &objects{jobs: map[string]*batchv1.Job{}, deployments: map[string]*appsv1.Deployment{},
		services: map[string]*corev1.Service{}, secrets: map[string]*corev1.Secret{}, configMaps: map[string]*corev1.ConfigMap{}}
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for i, doc := range regexp.MustCompile(`(?m)^---\s*$`).Split(string(data), -1) {
			if strings.TrimSpace(stripComments(doc)) == "" {
				continue
			}
			if err := o.decode(f, []byte(doc)); err != nil {
				t.Errorf("%s document %d: %v", f, i+1, err)
			}
		}
	}
	return o
}

func stripComments(doc string) string {
	var b strings.Builder
	for _, l := range strings.Split(doc, "\n") {
		if !strings.HasPrefix(strings.TrimSpace(l), "#") {
			b.WriteString(l + "\n")
		}
	}
	return b.String()
}

// TestStrictDecodingRefusesUnknownFields shows that the decoding used here
// catches a misspelt field.
func TestStrictDecodingRefusesUnknownFields(t *testing.T) {
	o := load(t)
	bad := []byte("apiVersion: batch/v1\nkind: Job\nmetadata:\n  name: x\nspec:\n  completionMod: Indexed\n")
	if err := o.decode("bad.yaml", bad); err == nil || !strings.Contains(err.Error(), "completionMod") {
		t.Fatalf("a misspelt field decoded: %v", err)
	}
	if err := o.decode("bad.yaml", []byte("apiVersion: batch/v1\nkind: CronJobb\n")); err == nil {
		t.Fatal("an unknown kind decoded")
	}
}

// container returns the single container of a pod template.
func container(t *testing.T, what string, spec corev1.PodSpec) corev1.Container {
	t.Helper()
	if len(spec.Containers) != 1 {
		t.Fatalf("%s: %d containers, want 1", what, len(spec.Containers))
	}
	return spec.Containers[0]
}

func envVar(c corev1.Container, name string) *corev1.EnvVar {
	for i := range c.Env {
		if c.Env[i].Name == name {
			return &c.Env[i]
		}
	}
	return nil
}

// checkWiring checks that every $(VAR) in the container's args is defined
// by its env or by a ConfigMap or Secret it imports, and that every
// referenced Secret, ConfigMap and key exists in the example manifests
// (parqdb-plan is made by the user in step 3 of the README).
func checkWiring(t *testing.T, o *objects, what string, spec corev1.PodSpec) {
	t.Helper()
	c := container(t, what, spec)
	defined := map[string]bool{}
	for _, e := range c.Env {
		defined[e.Name] = true
		if r := e.ValueFrom; r != nil {
			switch {
			case r.SecretKeyRef != nil:
				s, ok := o.secrets[r.SecretKeyRef.Name]
				if !ok || s.StringData[r.SecretKeyRef.Key] == "" {
					t.Errorf("%s: env %s: Secret %s key %s is not defined", what, e.Name, r.SecretKeyRef.Name, r.SecretKeyRef.Key)
				}
			case r.ConfigMapKeyRef != nil:
				if r.ConfigMapKeyRef.Name == "parqdb-plan" && r.ConfigMapKeyRef.Key == "PLAN" {
					continue
				}
				if cm, ok := o.configMaps[r.ConfigMapKeyRef.Name]; !ok || cm.Data[r.ConfigMapKeyRef.Key] == "" {
					t.Errorf("%s: env %s: ConfigMap %s key %s is not defined", what, e.Name, r.ConfigMapKeyRef.Name, r.ConfigMapKeyRef.Key)
				}
			}
		}
	}
	for _, from := range c.EnvFrom {
		switch {
		case from.SecretRef != nil:
			s, ok := o.secrets[from.SecretRef.Name]
			if !ok {
				t.Errorf("%s: envFrom Secret %s is not defined", what, from.SecretRef.Name)
			}
			for k := range s.StringData {
				defined[k] = true
			}
		case from.ConfigMapRef != nil:
			cm, ok := o.configMaps[from.ConfigMapRef.Name]
			if !ok {
				t.Errorf("%s: envFrom ConfigMap %s is not defined", what, from.ConfigMapRef.Name)
			}
			for k := range cm.Data {
				defined[k] = true
			}
		}
	}
	for _, a := range c.Args {
		for _, m := range regexp.MustCompile(`\$\(([A-Z_][A-Z0-9_]*)\)`).FindAllStringSubmatch(a, -1) {
			if !defined[m[1]] {
				t.Errorf("%s: argument %q uses $(%s), which nothing defines", what, a, m[1])
			}
		}
	}
	for _, need := range []string{"PARQDB_WAREHOUSE", "PARQDB_CATALOG", "AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_REGION"} {
		if !defined[need] {
			t.Errorf("%s: %s is not set", what, need)
		}
	}
	if envVar(c, "PARQDB_CATALOG") == nil || envVar(c, "PARQDB_CATALOG").ValueFrom == nil || envVar(c, "PARQDB_CATALOG").ValueFrom.SecretKeyRef == nil {
		t.Errorf("%s: PARQDB_CATALOG (which holds the database password) must come from a Secret", what)
	}
	for _, v := range spec.Volumes {
		if v.Secret != nil {
			if _, ok := o.secrets[v.Secret.SecretName]; !ok {
				t.Errorf("%s: volume %s: Secret %s is not defined", what, v.Name, v.Secret.SecretName)
			}
		}
	}
}

// argAfter returns the argument that follows flag.
func argAfter(args []string, flag string) string {
	i := slices.Index(args, flag)
	if i < 0 || i+1 >= len(args) {
		return ""
	}
	return args[i+1]
}

func TestBuildJobs(t *testing.T) {
	o := load(t)
	plan, shards, commit := o.jobs["parqdb-plan"], o.jobs["parqdb-build-shards"], o.jobs["parqdb-commit"]
	if plan == nil || shards == nil || commit == nil {
		t.Fatalf("jobs %v: want parqdb-plan, parqdb-build-shards, parqdb-commit", slices.Collect(func(yield func(string) bool) {
			for k := range o.jobs {
				if !yield(k) {
					return
				}
			}
		}))
	}
	pc, sc, cc := container(t, "plan", plan.Spec.Template.Spec), container(t, "shards", shards.Spec.Template.Spec), container(t, "commit", commit.Spec.Template.Spec)
	if !slices.Equal(pc.Args[:3], []string{"index", "create", "$(INDEX_NAME)"}) || argAfter(pc.Args, "--shards") == "" {
		t.Errorf("plan job args %q: want index create … --shards N", pc.Args)
	}
	n, err := strconv.Atoi(argAfter(pc.Args, "--shards"))
	if err != nil {
		t.Fatalf("plan --shards: %v", err)
	}
	s := shards.Spec
	if s.CompletionMode == nil || *s.CompletionMode != batchv1.IndexedCompletion {
		t.Errorf("shards job completionMode %v, want Indexed", s.CompletionMode)
	}
	if s.Completions == nil || int(*s.Completions) != n || s.Parallelism == nil || *s.Parallelism < 1 {
		t.Errorf("shards job completions %v parallelism %v, want completions = the plan's --shards %d", s.Completions, s.Parallelism, n)
	}
	if s.BackoffLimitPerIndex == nil || *s.BackoffLimitPerIndex < 1 {
		t.Errorf("shards job: a failed shard must be retried (backoffLimitPerIndex)")
	}
	if !slices.Equal(sc.Args[:3], []string{"index", "build-shard", "$(PLAN)"}) || argAfter(sc.Args, "--shard") != "$(JOB_COMPLETION_INDEX)" {
		t.Errorf("shards job args %q: want index build-shard $(PLAN) --shard $(JOB_COMPLETION_INDEX)", sc.Args)
	}
	idx := envVar(sc, "JOB_COMPLETION_INDEX")
	if idx == nil || idx.ValueFrom == nil || idx.ValueFrom.FieldRef == nil ||
		idx.ValueFrom.FieldRef.FieldPath != "metadata.annotations['batch.kubernetes.io/job-completion-index']" {
		t.Errorf("shards job: JOB_COMPLETION_INDEX must come from the pod's job-completion-index annotation: %+v", idx)
	}
	if !slices.Equal(cc.Args[:3], []string{"index", "commit", "$(PLAN)"}) {
		t.Errorf("commit job args %q", cc.Args)
	}
	for name, j := range o.jobs {
		if j.Spec.Template.Spec.RestartPolicy != corev1.RestartPolicyNever {
			t.Errorf("job %s: restartPolicy %q, want Never (the Job retries with a new pod)", name, j.Spec.Template.Spec.RestartPolicy)
		}
		checkWiring(t, o, "job "+name, j.Spec.Template.Spec)
	}
}

// TestJoinJobs checks the batch kNN join's Jobs: the plan job writes a
// plan of --shards N at the output, the Indexed Job has N completions,
// retries a failed shard and passes its index as --shard with the output
// as the plan's location, and the commit takes the same output.
func TestJoinJobs(t *testing.T) {
	o := load(t)
	plan, shards, commit := o.jobs["parqdb-join-plan"], o.jobs["parqdb-join-shards"], o.jobs["parqdb-join-commit"]
	if plan == nil || shards == nil || commit == nil {
		t.Fatal("want jobs parqdb-join-plan, parqdb-join-shards, parqdb-join-commit")
	}
	pc, sc, cc := container(t, "join plan", plan.Spec.Template.Spec), container(t, "join shards", shards.Spec.Template.Spec), container(t, "join commit", commit.Spec.Template.Spec)
	out := argAfter(pc.Args, "--output")
	if pc.Args[0] != "join" || out == "" || argAfter(pc.Args, "--queries-table") == "" || argAfter(pc.Args, "--query-key") == "" ||
		argAfter(pc.Args, "--query-vector") == "" {
		t.Errorf("join plan args %q: want join INDEX --queries-table … --query-key … --query-vector … --output DEST --shards N", pc.Args)
	}
	n, err := strconv.Atoi(argAfter(pc.Args, "--shards"))
	if err != nil {
		t.Fatalf("join plan --shards: %v", err)
	}
	s := shards.Spec
	if s.CompletionMode == nil || *s.CompletionMode != batchv1.IndexedCompletion {
		t.Errorf("join shards completionMode %v, want Indexed", s.CompletionMode)
	}
	if s.Completions == nil || int(*s.Completions) != n || s.Parallelism == nil || *s.Parallelism < 1 {
		t.Errorf("join shards completions %v parallelism %v, want completions = the plan's --shards %d", s.Completions, s.Parallelism, n)
	}
	if s.BackoffLimitPerIndex == nil || *s.BackoffLimitPerIndex < 1 {
		t.Errorf("join shards: a failed shard must be retried (backoffLimitPerIndex)")
	}
	if !slices.Equal(sc.Args[:2], []string{"join-shard", out}) || argAfter(sc.Args, "--shard") != "$(JOB_COMPLETION_INDEX)" {
		t.Errorf("join shards args %q: want join-shard %s --shard $(JOB_COMPLETION_INDEX)", sc.Args, out)
	}
	idx := envVar(sc, "JOB_COMPLETION_INDEX")
	if idx == nil || idx.ValueFrom == nil || idx.ValueFrom.FieldRef == nil ||
		idx.ValueFrom.FieldRef.FieldPath != "metadata.annotations['batch.kubernetes.io/job-completion-index']" {
		t.Errorf("join shards: JOB_COMPLETION_INDEX must come from the pod's job-completion-index annotation: %+v", idx)
	}
	if !slices.Equal(cc.Args[:2], []string{"join-commit", out}) {
		t.Errorf("join commit args %q: want join-commit %s", cc.Args, out)
	}
}

func TestServeDeployment(t *testing.T) {
	o := load(t)
	d, svc := o.deployments["parqdb-serve"], o.services["parqdb"]
	if d == nil || svc == nil {
		t.Fatal("want Deployment parqdb-serve and Service parqdb")
	}
	if d.Spec.Replicas == nil || *d.Spec.Replicas < 2 {
		t.Errorf("replicas %v: the point is several", d.Spec.Replicas)
	}
	pod := d.Spec.Template
	for k, v := range d.Spec.Selector.MatchLabels {
		if pod.Labels[k] != v {
			t.Errorf("deployment selector %s=%s does not match the pod labels %v", k, v, pod.Labels)
		}
	}
	for k, v := range svc.Spec.Selector {
		if pod.Labels[k] != v {
			t.Errorf("service selector %s=%s does not match the pod labels %v", k, v, pod.Labels)
		}
	}
	c := container(t, "serve", pod.Spec)
	if c.Args[0] != "serve" || !strings.HasPrefix(argAfter(c.Args, "--listen"), "0.0.0.0:") || argAfter(c.Args, "--token-file") == "" {
		t.Errorf("serve args %q: want serve --listen 0.0.0.0:PORT --token-file F", c.Args)
	}
	port := argAfter(c.Args, "--listen")[len("0.0.0.0:"):]
	if len(c.Ports) != 1 || strconv.Itoa(int(c.Ports[0].ContainerPort)) != port {
		t.Errorf("container ports %+v, want %s", c.Ports, port)
	}
	if len(svc.Spec.Ports) != 1 || svc.Spec.Ports[0].TargetPort.String() != c.Ports[0].Name {
		t.Errorf("service targetPort %v, want the container port %q", svc.Spec.Ports, c.Ports[0].Name)
	}
	tokenDir := filepath.Dir(argAfter(c.Args, "--token-file"))
	if !slices.ContainsFunc(c.VolumeMounts, func(m corev1.VolumeMount) bool { return m.MountPath == tokenDir }) {
		t.Errorf("no volume is mounted at the token file's folder %s", tokenDir)
	}
	if c.ReadinessProbe == nil || c.ReadinessProbe.HTTPGet == nil || c.ReadinessProbe.HTTPGet.Path != "/readyz" {
		t.Errorf("readiness probe %+v, want GET /readyz", c.ReadinessProbe)
	}
	checkWiring(t, o, "deployment parqdb-serve", pod.Spec)
}

// TestStaticBinary checks what the Dockerfile relies on: the default
// (non-DuckDB) build of parqdb needs no cgo, so CGO_ENABLED=0 gives a
// static binary.
func TestStaticBinary(t *testing.T) {
	df, err := os.ReadFile("Dockerfile")
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Contains(df, []byte("CGO_ENABLED=0 go build")) || !bytes.Contains(df, []byte("./cmd/parqdb")) {
		t.Fatal("the Dockerfile does not build ./cmd/parqdb with CGO_ENABLED=0")
	}
	cmd := exec.Command("go", "list", "-e", "-deps", "-f", "{{if .Error}}{{.ImportPath}}: {{.Error}}{{end}}", "github.com/parqdb/parqdb/cmd/parqdb")
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
	out, err := cmd.CombinedOutput()
	if err != nil || len(bytes.TrimSpace(out)) > 0 {
		t.Fatalf("parqdb does not build without cgo: %v\n%s", err, out)
	}
}
