package manifests

import (
	"errors"
	"fmt"
	"net"
	"regexp"
	"strconv"
	"strings"

	appsv1 "k8s.io/api/apps/v1"
	autoscalingv2 "k8s.io/api/autoscaling/v2"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/util/intstr"
	sigsjson "sigs.k8s.io/json"
	"sigs.k8s.io/kustomize/api/krusty"
	"sigs.k8s.io/kustomize/kyaml/filesys"

	"github.com/strata-kb/strata/deploy/localstack"
	"github.com/strata-kb/strata/shared/bucket"
	"github.com/strata-kb/strata/shared/pipeline"
	"github.com/strata-kb/strata/shared/testservers"
)

// object is one built manifest, decoded into its k8s.io/api type.
type object struct {
	Kind, Name string
	Obj        any
}

// kinds are the only kinds the manifests may contain, by apiVersion/kind.
var kinds = map[string]func() any{
	"v1/Namespace":                           func() any { return &corev1.Namespace{} },
	"v1/ConfigMap":                           func() any { return &corev1.ConfigMap{} },
	"v1/Secret":                              func() any { return &corev1.Secret{} },
	"v1/Service":                             func() any { return &corev1.Service{} },
	"apps/v1/Deployment":                     func() any { return &appsv1.Deployment{} },
	"apps/v1/StatefulSet":                    func() any { return &appsv1.StatefulSet{} },
	"batch/v1/Job":                           func() any { return &batchv1.Job{} },
	"policy/v1/PodDisruptionBudget":          func() any { return &policyv1.PodDisruptionBudget{} },
	"autoscaling/v2/HorizontalPodAutoscaler": func() any { return &autoscalingv2.HorizontalPodAutoscaler{} },
}

// build runs kustomize on dir and decodes every object strictly: unknown or
// duplicate fields (a misspelled readinesProbe), fields in the wrong case and
// kinds not in the list above are errors.
func build(fs filesys.FileSystem, dir string) ([]object, error) {
	m, err := krusty.MakeKustomizer(krusty.MakeDefaultOptions()).Run(fs, dir)
	if err != nil {
		return nil, fmt.Errorf("kustomize build %s: %w", dir, err)
	}
	var objs []object
	var errs []error
	for _, r := range m.Resources() {
		key := r.GetApiVersion() + "/" + r.GetKind()
		newObj, ok := kinds[key]
		if !ok {
			errs = append(errs, fmt.Errorf("%s %s: kind not allowed here (add it to kinds with its k8s.io/api type)", key, r.GetName()))
			continue
		}
		data, err := r.MarshalJSON()
		if err != nil {
			return nil, err
		}
		obj := newObj()
		strict, err := sigsjson.UnmarshalStrict(data, obj, sigsjson.DisallowDuplicateFields, sigsjson.DisallowUnknownFields)
		if err != nil {
			errs = append(errs, fmt.Errorf("%s %s: %w", r.GetKind(), r.GetName(), err))
			continue
		}
		for _, e := range strict {
			errs = append(errs, fmt.Errorf("%s %s: %w", r.GetKind(), r.GetName(), e))
		}
		objs = append(objs, object{Kind: r.GetKind(), Name: r.GetName(), Obj: obj})
	}
	return objs, errors.Join(errs...)
}

// workload is anything that runs pods.
type workload struct {
	Kind, Name string
	Labels     map[string]string // of the pod template
	Selector   *metav1.LabelSelector
	Pod        *corev1.PodSpec
	ClaimNames map[string]bool // volumeClaimTemplates
}

func workloads(objs []object) []workload {
	var out []workload
	for _, o := range objs {
		switch v := o.Obj.(type) {
		case *appsv1.Deployment:
			out = append(out, workload{o.Kind, o.Name, v.Spec.Template.Labels, v.Spec.Selector, &v.Spec.Template.Spec, nil})
		case *appsv1.StatefulSet:
			claims := map[string]bool{}
			for _, c := range v.Spec.VolumeClaimTemplates {
				claims[c.Name] = true
			}
			out = append(out, workload{o.Kind, o.Name, v.Spec.Template.Labels, v.Spec.Selector, &v.Spec.Template.Spec, claims})
		case *batchv1.Job:
			out = append(out, workload{o.Kind, o.Name, v.Spec.Template.Labels, nil, &v.Spec.Template.Spec, nil})
		}
	}
	return out
}

func find[T any](objs []object, name string) (T, bool) {
	for _, o := range objs {
		if v, ok := o.Obj.(T); ok && o.Name == name {
			return v, true
		}
	}
	var zero T
	return zero, false
}

func all[T any](objs []object) []T {
	var out []T
	for _, o := range objs {
		if v, ok := o.Obj.(T); ok {
			out = append(out, v)
		}
	}
	return out
}

// pinned reports whether image names a tag other than latest, or a digest.
func pinned(image string) bool {
	if strings.Contains(image, "@sha256:") {
		return true
	}
	last := image[strings.LastIndex(image, "/")+1:]
	_, tag, ok := strings.Cut(last, ":")
	return ok && tag != "" && tag != "latest"
}

// strataService returns the Strata service a container image belongs to.
func strataService(image string) (string, bool) {
	for _, s := range services {
		if strings.HasPrefix(image, "strata/"+s+":") || strings.Contains(image, "/strata/"+s+":") {
			return s, true
		}
	}
	return "", false
}

// checkCluster checks the invariants every build of deploy/k8s must keep.
func checkCluster(objs []object, flags *flagChecker) []error {
	var errs []error
	add := func(format string, args ...any) { errs = append(errs, fmt.Errorf(format, args...)) }
	secrets := map[string]map[string]bool{}
	for _, s := range all[*corev1.Secret](objs) {
		keys := map[string]bool{}
		for k := range s.Data {
			keys[k] = true
		}
		for k := range s.StringData {
			keys[k] = true
		}
		secrets[s.Name] = keys
	}
	configMaps := map[string]*corev1.ConfigMap{}
	for _, c := range all[*corev1.ConfigMap](objs) {
		configMaps[c.Name] = c
	}
	ns := all[*corev1.Namespace](objs)
	if len(ns) != 1 {
		add("want one Namespace, got %d", len(ns))
	} else if ns[0].Labels["pod-security.kubernetes.io/enforce"] != "restricted" {
		add("Namespace %s: enforce the restricted Pod Security Standard", ns[0].Name)
	}
	wls := workloads(objs)
	pdbs := all[*policyv1.PodDisruptionBudget](objs)
	for _, w := range wls {
		id := w.Kind + " " + w.Name
		pod := w.Pod
		if w.Selector != nil {
			sel, err := metav1.LabelSelectorAsSelector(w.Selector)
			if err != nil || sel.Empty() || !sel.Matches(labels.Set(w.Labels)) {
				add("%s: selector %v does not select its own pod template labels %v", id, w.Selector, w.Labels)
			}
		}
		psc := pod.SecurityContext
		if psc == nil || psc.RunAsNonRoot == nil || !*psc.RunAsNonRoot {
			add("%s: pod securityContext.runAsNonRoot must be true", id)
		}
		if psc == nil || psc.RunAsUser == nil || *psc.RunAsUser == 0 {
			add("%s: pod securityContext.runAsUser must be a non-zero uid (images may name their user)", id)
		}
		if psc == nil || psc.SeccompProfile == nil || psc.SeccompProfile.Type != corev1.SeccompProfileTypeRuntimeDefault {
			add("%s: pod seccompProfile must be RuntimeDefault", id)
		}
		if pod.AutomountServiceAccountToken == nil || *pod.AutomountServiceAccountToken {
			add("%s: automountServiceAccountToken must be false (nothing here talks to the API server)", id)
		}
		volumes := map[string]corev1.Volume{}
		for _, v := range pod.Volumes {
			volumes[v.Name] = v
			if v.ConfigMap != nil && configMaps[v.ConfigMap.Name] == nil {
				add("%s: volume %s: ConfigMap %s does not exist", id, v.Name, v.ConfigMap.Name)
			}
		}
		check := func(c corev1.Container, init bool) {
			cid := fmt.Sprintf("%s container %s", id, c.Name)
			if !pinned(c.Image) {
				add("%s: image %q is not pinned to a tag or digest (or is :latest)", cid, c.Image)
			}
			req := c.Resources.Requests
			if req.Cpu().IsZero() || req.Memory().IsZero() {
				add("%s: resources.requests needs cpu and memory", cid)
			}
			if c.Resources.Limits.Memory().IsZero() {
				add("%s: resources.limits.memory is required", cid)
			}
			sc := c.SecurityContext
			if sc == nil || sc.AllowPrivilegeEscalation == nil || *sc.AllowPrivilegeEscalation {
				add("%s: securityContext.allowPrivilegeEscalation must be false", cid)
			}
			if sc == nil || sc.Capabilities == nil || len(sc.Capabilities.Drop) != 1 || sc.Capabilities.Drop[0] != "ALL" {
				add("%s: securityContext.capabilities must drop ALL", cid)
			}
			if sc == nil || sc.ReadOnlyRootFilesystem == nil || !*sc.ReadOnlyRootFilesystem {
				add("%s: securityContext.readOnlyRootFilesystem must be true", cid)
			}
			if sc != nil && sc.RunAsNonRoot != nil && !*sc.RunAsNonRoot {
				add("%s: securityContext.runAsNonRoot is false", cid)
			}
			ports := map[string]int32{}
			numbers := map[int32]bool{}
			for _, p := range c.Ports {
				ports[p.Name] = p.ContainerPort
				numbers[p.ContainerPort] = true
			}
			if !init && w.Kind != "Job" {
				if c.ReadinessProbe == nil {
					add("%s: readinessProbe is required", cid)
				}
				if c.LivenessProbe == nil {
					add("%s: livenessProbe is required", cid)
				}
			}
			for _, pr := range []*corev1.Probe{c.ReadinessProbe, c.LivenessProbe, c.StartupProbe} {
				if pr == nil || pr.HTTPGet == nil {
					continue
				}
				p := pr.HTTPGet.Port
				if (p.Type == intstr.String && ports[p.StrVal] == 0) || (p.Type == intstr.Int && !numbers[p.IntVal]) {
					add("%s: probe %s port %s is not a port of the container", cid, pr.HTTPGet.Path, p.String())
				}
			}
			for _, m := range c.VolumeMounts {
				if _, ok := volumes[m.Name]; !ok && !w.ClaimNames[m.Name] {
					add("%s: volumeMount %s names no volume", cid, m.Name)
				}
			}
			var strataVars []string
			env := map[string]string{}
			for _, e := range c.Env {
				strataVars = append(strataVars, e.Name)
				env[e.Name] = e.Value
				if e.ValueFrom == nil {
					continue
				}
				if r := e.ValueFrom.SecretKeyRef; r != nil && !secrets[r.Name][r.Key] {
					add("%s: env %s: Secret %s has no key %s", cid, e.Name, r.Name, r.Key)
				}
				if r := e.ValueFrom.ConfigMapKeyRef; r != nil && (configMaps[r.Name] == nil || configMaps[r.Name].Data[r.Key] == "") {
					add("%s: env %s: ConfigMap %s has no key %s", cid, e.Name, r.Name, r.Key)
				}
			}
			for _, ef := range c.EnvFrom {
				if ef.ConfigMapRef == nil {
					continue
				}
				cm := configMaps[ef.ConfigMapRef.Name]
				if cm == nil {
					add("%s: envFrom ConfigMap %s does not exist", cid, ef.ConfigMapRef.Name)
					continue
				}
				for k, v := range cm.Data {
					strataVars = append(strataVars, k)
					if _, ok := env[k]; !ok {
						env[k] = v
					}
				}
			}
			svc, isStrata := strataService(c.Image)
			if !isStrata || init {
				return
			}
			if svc != c.Name {
				add("%s: runs the %s image", cid, svc)
			}
			if bad := flags.check(svc, strataVars); len(bad) > 0 {
				add("%s: %v are not flags of %s", cid, bad, svc)
			}
			addrVar := "STRATA_HTTP_ADDR"
			if svc == "queryd" {
				addrVar = "STRATA_ADDR"
			}
			_, port, err := net.SplitHostPort(env[addrVar])
			if err != nil || !strings.HasPrefix(env[addrVar], "0.0.0.0:") {
				add("%s: %s=%q must listen on 0.0.0.0:<port> for the probes", cid, addrVar, env[addrVar])
			}
			for _, pr := range []*corev1.Probe{c.ReadinessProbe, c.LivenessProbe} {
				if pr == nil || pr.HTTPGet == nil {
					add("%s: probes must be HTTP GETs of the health endpoints", cid)
					continue
				}
				p := pr.HTTPGet.Port
				n := p.IntVal
				if p.Type == intstr.String {
					n = ports[p.StrVal]
				}
				if strconv.Itoa(int(n)) != port {
					add("%s: probe %s on port %d, but the service listens on %s (%s)", cid, pr.HTTPGet.Path, n, port, addrVar)
				}
			}
			if c.ReadinessProbe != nil && c.ReadinessProbe.HTTPGet != nil && c.ReadinessProbe.HTTPGet.Path != "/readyz" {
				add("%s: readinessProbe must ask /readyz", cid)
			}
			if c.LivenessProbe != nil && c.LivenessProbe.HTTPGet != nil && c.LivenessProbe.HTTPGet.Path != "/healthz" {
				add("%s: livenessProbe must ask /healthz (not /readyz: a NATS outage must not restart every pod)", cid)
			}
		}
		for _, c := range pod.InitContainers {
			check(c, true)
		}
		for _, c := range pod.Containers {
			check(c, false)
		}
		if w.Kind == "Job" {
			continue
		}
		var covering []string
		for _, p := range pdbs {
			sel, err := metav1.LabelSelectorAsSelector(p.Spec.Selector)
			if err == nil && !sel.Empty() && sel.Matches(labels.Set(w.Labels)) {
				covering = append(covering, p.Name)
			}
		}
		if len(covering) != 1 {
			add("%s: want exactly one PodDisruptionBudget selecting it, got %v", id, covering)
		}
	}
	for _, p := range pdbs {
		sel, err := metav1.LabelSelectorAsSelector(p.Spec.Selector)
		n := 0
		for _, w := range wls {
			if err == nil && !sel.Empty() && sel.Matches(labels.Set(w.Labels)) {
				n++
			}
		}
		if n == 0 {
			add("PodDisruptionBudget %s selects no workload", p.Name)
		}
		if (p.Spec.MinAvailable == nil) == (p.Spec.MaxUnavailable == nil) {
			add("PodDisruptionBudget %s: set one of minAvailable and maxUnavailable", p.Name)
		}
	}
	hpaTargets := map[string]bool{}
	for _, h := range all[*autoscalingv2.HorizontalPodAutoscaler](objs) {
		ref := h.Spec.ScaleTargetRef
		d, ok := find[*appsv1.Deployment](objs, ref.Name)
		if ref.Kind != "Deployment" || ref.APIVersion != "apps/v1" || !ok {
			add("HorizontalPodAutoscaler %s: target %s %s %s does not exist", h.Name, ref.APIVersion, ref.Kind, ref.Name)
			continue
		}
		hpaTargets[ref.Name] = true
		if h.Spec.MinReplicas == nil || *h.Spec.MinReplicas < 1 || *h.Spec.MinReplicas > h.Spec.MaxReplicas {
			add("HorizontalPodAutoscaler %s: need 1 <= minReplicas <= maxReplicas", h.Name)
		}
		if d.Spec.Replicas != nil {
			add("Deployment %s: remove spec.replicas, HorizontalPodAutoscaler %s owns it (apply would reset it)", d.Name, h.Name)
		}
		for _, m := range h.Spec.Metrics {
			if m.Type == autoscalingv2.ResourceMetricSourceType && m.Resource != nil && m.Resource.Target.Type == autoscalingv2.UtilizationMetricType {
				for _, c := range d.Spec.Template.Spec.Containers {
					if _, ok := c.Resources.Requests[m.Resource.Name]; !ok {
						add("HorizontalPodAutoscaler %s: utilization of %s needs a %s request on container %s", h.Name, m.Resource.Name, m.Resource.Name, c.Name)
					}
				}
			}
		}
		if len(h.Spec.Metrics) == 0 {
			add("HorizontalPodAutoscaler %s: no metrics", h.Name)
		}
	}
	for _, s := range []string{"ingestor", "embedder", "indexer"} {
		if !hpaTargets[s] {
			add("worker %s has no HorizontalPodAutoscaler", s)
		}
	}
	errs = append(errs, checkServices(objs, wls)...)
	errs = append(errs, checkNATS(objs)...)
	errs = append(errs, checkMinIO(objs)...)
	errs = append(errs, checkWeaviate(objs)...)
	return errs
}

// checkServices: every Service selects pods and its named target ports
// exist; every StatefulSet's serviceName is a headless Service.
func checkServices(objs []object, wls []workload) []error {
	var errs []error
	svcs := map[string]*corev1.Service{}
	for _, s := range all[*corev1.Service](objs) {
		svcs[s.Name] = s
		var pods []workload
		for _, w := range wls {
			if w.Kind != "Job" && len(s.Spec.Selector) > 0 && labels.SelectorFromSet(s.Spec.Selector).Matches(labels.Set(w.Labels)) {
				pods = append(pods, w)
			}
		}
		if len(pods) == 0 {
			errs = append(errs, fmt.Errorf("Service %s selects no pods", s.Name))
			continue
		}
		for _, p := range s.Spec.Ports {
			if p.TargetPort.Type != intstr.String {
				continue
			}
			found := false
			for _, c := range pods[0].Pod.Containers {
				for _, cp := range c.Ports {
					found = found || cp.Name == p.TargetPort.StrVal
				}
			}
			if !found {
				errs = append(errs, fmt.Errorf("Service %s: targetPort %s is no container port of %s", s.Name, p.TargetPort.StrVal, pods[0].Name))
			}
		}
	}
	for _, st := range all[*appsv1.StatefulSet](objs) {
		s := svcs[st.Spec.ServiceName]
		if s == nil || s.Spec.ClusterIP != corev1.ClusterIPNone || !s.Spec.PublishNotReadyAddresses {
			errs = append(errs, fmt.Errorf("StatefulSet %s: serviceName %q must be a headless Service publishing not-ready addresses (peers find each other before they are ready)", st.Name, st.Spec.ServiceName))
		}
	}
	return errs
}

func container(objs []object, statefulSet, name string) (*appsv1.StatefulSet, *corev1.Container) {
	st, ok := find[*appsv1.StatefulSet](objs, statefulSet)
	if !ok {
		return nil, nil
	}
	for i := range st.Spec.Template.Spec.Containers {
		if st.Spec.Template.Spec.Containers[i].Name == name {
			return st, &st.Spec.Template.Spec.Containers[i]
		}
	}
	return st, nil
}

func envOf(c *corev1.Container) map[string]string {
	m := map[string]string{}
	for _, e := range c.Env {
		m[e.Name] = e.Value
	}
	return m
}

func podDNS(st *appsv1.StatefulSet, i int) string {
	return fmt.Sprintf("%s-%d.%s.%s.svc.cluster.local", st.Name, i, st.Spec.ServiceName, st.Namespace)
}

// checkNATS: three JetStream servers routed to each other, and the Job that
// creates shared/pipeline's streams with 3 replicas.
func checkNATS(objs []object) []error {
	var errs []error
	st, c := container(objs, "nats", "nats")
	if c == nil {
		return []error{errors.New("StatefulSet nats with container nats is missing")}
	}
	if st.Spec.Replicas == nil || *st.Spec.Replicas != 3 {
		errs = append(errs, fmt.Errorf("StatefulSet nats: want 3 replicas (JetStream R3), got %v", st.Spec.Replicas))
	}
	cm, ok := find[*corev1.ConfigMap](objs, "nats-config")
	if !ok {
		return append(errs, errors.New("ConfigMap nats-config is missing"))
	}
	conf := cm.Data["nats.conf"]
	if !regexp.MustCompile(`(?m)^\s*jetstream\s*\{`).MatchString(conf) {
		errs = append(errs, errors.New("nats.conf: no jetstream block"))
	}
	podName := false
	for _, e := range c.Env {
		podName = podName || (e.Name == "POD_NAME" && e.ValueFrom != nil && e.ValueFrom.FieldRef != nil && e.ValueFrom.FieldRef.FieldPath == "metadata.name")
	}
	if !strings.Contains(conf, "server_name: $POD_NAME") || !podName {
		errs = append(errs, errors.New("nats.conf: server_name must come from the pod name (unique per JetStream server)"))
	}
	routes := regexp.MustCompile(`nats://([\w.-]+):6222`).FindAllStringSubmatch(conf, -1)
	n := 0
	if st.Spec.Replicas != nil {
		n = int(*st.Spec.Replicas)
	}
	if len(routes) != n {
		errs = append(errs, fmt.Errorf("nats.conf: %d routes for %d servers", len(routes), n))
	}
	for i := 0; i < n && i < len(routes); i++ {
		if routes[i][1] != podDNS(st, i) {
			errs = append(errs, fmt.Errorf("nats.conf: route %d is %s, want %s", i, routes[i][1], podDNS(st, i)))
		}
	}
	job, ok := find[*batchv1.Job](objs, "nats-streams")
	if !ok {
		return append(errs, errors.New("Job nats-streams is missing"))
	}
	script := strings.Join(job.Spec.Template.Spec.Containers[0].Args, "\n")
	if !strings.Contains(script, "--replicas 3") {
		errs = append(errs, errors.New("Job nats-streams: no --replicas 3"))
	}
	errs = append(errs, checkStreamCommands(script, 3)...)
	for _, b := range []string{pipeline.ObjectStateBucket} {
		if !strings.Contains(script, "nats kv add "+b+" ") {
			errs = append(errs, fmt.Errorf("Job nats-streams: KV bucket %s is not created", b))
		}
	}
	return errs
}

// checkMinIO: distributed over every replica, notifications as the local
// stack, and the set-up Job creating the buckets and the notification.
func checkMinIO(objs []object) []error {
	var errs []error
	st, c := container(objs, "minio", "minio")
	if c == nil {
		return []error{errors.New("StatefulSet minio with container minio is missing")}
	}
	n := int(*st.Spec.Replicas)
	if n < 4 {
		errs = append(errs, fmt.Errorf("StatefulSet minio: distributed MinIO wants 4 or more servers, got %d", n))
	}
	want := fmt.Sprintf("http://%s-{0...%d}.%s.%s.svc.cluster.local/data", st.Name, n-1, st.Spec.ServiceName, st.Namespace)
	if len(c.Args) < 2 || c.Args[0] != "server" || c.Args[1] != want {
		errs = append(errs, fmt.Errorf("StatefulSet minio: args %v, want server %s", c.Args, want))
	}
	if st.Spec.PodManagementPolicy != appsv1.ParallelPodManagement {
		errs = append(errs, errors.New("StatefulSet minio: podManagementPolicy must be Parallel (servers wait for each other)"))
	}
	errs = append(errs, checkMinIONotify(envOf(c), func(dir string) bool {
		for _, m := range c.VolumeMounts {
			if m.MountPath == dir && m.Name != "tmp" {
				return true
			}
		}
		return false
	})...)
	job, ok := find[*batchv1.Job](objs, "minio-setup")
	if !ok {
		return append(errs, errors.New("Job minio-setup is missing"))
	}
	errs = append(errs, checkBucketScript(strings.Join(job.Spec.Template.Spec.Containers[0].Args, "\n"))...)
	return errs
}

// checkMinIONotify checks MinIO's NATS notification target against the local
// stack's (shared/testservers): id, subject, JetStream, queue on persistent storage.
func checkMinIONotify(env map[string]string, persistent func(dir string) bool) []error {
	var errs []error
	id := "_" + testservers.MinIONotifyID
	want := map[string]string{
		"MINIO_NOTIFY_NATS_ENABLE" + id:    "on",
		"MINIO_NOTIFY_NATS_ADDRESS" + id:   "nats:4222",
		"MINIO_NOTIFY_NATS_SUBJECT" + id:   pipeline.ObjectEventsSubject,
		"MINIO_NOTIFY_NATS_JETSTREAM" + id: "on",
		// The live target: the same events at once, on the subject the ingestor listens to.
		"MINIO_NOTIFY_NATS_ENABLE_" + testservers.MinIOLiveNotifyID:  "on",
		"MINIO_NOTIFY_NATS_ADDRESS_" + testservers.MinIOLiveNotifyID: "nats:4222",
		"MINIO_NOTIFY_NATS_SUBJECT_" + testservers.MinIOLiveNotifyID: pipeline.ObjectLiveSubject,
	}
	for k, v := range want {
		if env[k] != v {
			errs = append(errs, fmt.Errorf("minio: %s=%q, want %q", k, env[k], v))
		}
	}
	q := env["MINIO_NOTIFY_NATS_QUEUE_DIR"+id]
	if q == "" || !persistent(q) {
		errs = append(errs, fmt.Errorf("minio: MINIO_NOTIFY_NATS_QUEUE_DIR%s=%q must be on a persistent volume (events wait there while NATS is down)", id, q))
	}
	return errs
}

// checkBucketScript checks an mc script against deploy/localstack: both
// buckets, and put/delete events of the watched one to the NATS target.
func checkBucketScript(script string) []error {
	var errs []error
	arn := bucket.NATSTargetARN(testservers.MinIONotifyID, "").String()
	liveARN := bucket.NATSTargetARN(testservers.MinIOLiveNotifyID, "").String()
	for _, want := range []string{
		"mc mb --ignore-existing strata/" + localstack.Bucket + "\n",
		"mc mb --ignore-existing strata/" + localstack.AssetsBucket + "\n",
		"mc event add strata/" + localstack.Bucket + " " + arn + " --event put,delete",
		"mc event add strata/" + localstack.Bucket + " " + liveARN + " --event put,delete",
	} {
		if !strings.Contains(script+"\n", want) {
			errs = append(errs, fmt.Errorf("bucket set-up script lacks %q", strings.TrimSpace(want)))
		}
	}
	return errs
}

// checkWeaviate: a Raft cluster of every replica, replicated collections.
func checkWeaviate(objs []object) []error {
	var errs []error
	st, c := container(objs, "weaviate", "weaviate")
	if c == nil {
		return []error{errors.New("StatefulSet weaviate with container weaviate is missing")}
	}
	n := int(*st.Spec.Replicas)
	env := envOf(c)
	var names []string
	for i := 0; i < n; i++ {
		names = append(names, fmt.Sprintf("%s-%d", st.Name, i))
	}
	if env["RAFT_JOIN"] != strings.Join(names, ",") {
		errs = append(errs, fmt.Errorf("weaviate: RAFT_JOIN=%q, want %q", env["RAFT_JOIN"], strings.Join(names, ",")))
	}
	if env["RAFT_BOOTSTRAP_EXPECT"] != strconv.Itoa(n) {
		errs = append(errs, fmt.Errorf("weaviate: RAFT_BOOTSTRAP_EXPECT=%q, want %d", env["RAFT_BOOTSTRAP_EXPECT"], n))
	}
	if want := fmt.Sprintf("%s.%s.svc.cluster.local:%s", st.Spec.ServiceName, st.Namespace, env["CLUSTER_GOSSIP_BIND_PORT"]); env["CLUSTER_JOIN"] != want {
		errs = append(errs, fmt.Errorf("weaviate: CLUSTER_JOIN=%q, want %q", env["CLUSTER_JOIN"], want))
	}
	if f, err := strconv.Atoi(env["REPLICATION_MINIMUM_FACTOR"]); err != nil || f < 2 || f > n {
		errs = append(errs, fmt.Errorf("weaviate: REPLICATION_MINIMUM_FACTOR=%q, want 2..%d", env["REPLICATION_MINIMUM_FACTOR"], n))
	}
	hostFromPod := false
	for _, e := range c.Env {
		if e.Name == "CLUSTER_HOSTNAME" && e.ValueFrom != nil && e.ValueFrom.FieldRef != nil && e.ValueFrom.FieldRef.FieldPath == "metadata.name" {
			hostFromPod = true
		}
	}
	if !hostFromPod {
		errs = append(errs, errors.New("weaviate: CLUSTER_HOSTNAME must be the pod name (RAFT_JOIN names pods)"))
	}
	return errs
}
