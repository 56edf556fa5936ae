{{/* Chart name, truncated to the DNS label budget. */}}
{{- define "jetstream.name" -}}
{{- default .Chart.Name .Values.nameOverride | trunc 63 | trimSuffix "-" -}}
{{- end -}}

{{/* Resource-name prefix: <release>-jetstream, or the release name when it already contains it. */}}
{{- define "jetstream.fullname" -}}
{{- if .Values.fullnameOverride -}}
{{- .Values.fullnameOverride | trunc 63 | trimSuffix "-" -}}
{{- else -}}
{{- $name := default .Chart.Name .Values.nameOverride -}}
{{- if contains $name .Release.Name -}}
{{- .Release.Name | trunc 63 | trimSuffix "-" -}}
{{- else -}}
{{- printf "%s-%s" .Release.Name $name | trunc 63 | trimSuffix "-" -}}
{{- end -}}
{{- end -}}
{{- end -}}

{{- define "jetstream.labels" -}}
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" }}
app.kubernetes.io/name: {{ include "jetstream.name" . }}
app.kubernetes.io/instance: {{ .Release.Name }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
app.kubernetes.io/part-of: jetstream
{{- end -}}

{{/* Selector labels of one component; call with (dict "root" $ "component" "ingester"). */}}
{{- define "jetstream.selectorLabels" -}}
app.kubernetes.io/name: {{ include "jetstream.name" .root }}
app.kubernetes.io/instance: {{ .root.Release.Name }}
app.kubernetes.io/component: {{ .component }}
{{- end -}}

{{- define "jetstream.componentLabels" -}}
{{ include "jetstream.labels" .root }}
app.kubernetes.io/component: {{ .component }}
{{- end -}}

{{- define "jetstream.image" -}}
{{- printf "%s%s:%s" .root.Values.image.prefix .component (default .root.Chart.AppVersion .root.Values.image.tag) -}}
{{- end -}}

{{- define "jetstream.claimName" -}}
{{- default (printf "%s-data" (include "jetstream.fullname" .)) .Values.persistence.existingClaim -}}
{{- end -}}

{{- define "jetstream.importSecretName" -}}
{{- default (printf "%s-import" (include "jetstream.fullname" .)) .Values.importToken.existingSecret -}}
{{- end -}}

{{- define "jetstream.importSecretKey" -}}
{{- if .Values.importToken.existingSecret -}}{{ .Values.importToken.existingSecretKey }}{{- else -}}token{{- end -}}
{{- end -}}

{{- define "jetstream.hasImportToken" -}}
{{- if or .Values.importToken.existingSecret .Values.importToken.value -}}true{{- end -}}
{{- end -}}

{{/*
Pod-level settings shared by every component. Service links are off: Kubernetes would otherwise
inject <SERVICE>_PORT variables such as JETSTREAM_GATEWAY_PORT, and every process refuses unknown
JETSTREAM_* names at startup.
*/}}
{{- define "jetstream.podCommon" -}}
enableServiceLinks: false
automountServiceAccountToken: false
{{- with .Values.imagePullSecrets }}
imagePullSecrets:
  {{- toYaml . | nindent 2 }}
{{- end }}
securityContext:
  {{- toYaml .Values.podSecurityContext | nindent 2 }}
{{- end -}}

{{/* Archive-server and gateways must share the ingester's node: the volume is ReadWriteOnce and the feed is a Unix socket on it. */}}
{{- define "jetstream.ingesterAffinity" -}}
affinity:
  podAffinity:
    requiredDuringSchedulingIgnoredDuringExecution:
      - topologyKey: kubernetes.io/hostname
        labelSelector:
          matchLabels:
            {{- include "jetstream.selectorLabels" (dict "root" . "component" "ingester") | nindent 12 }}
{{- end -}}

{{/* Environment of one component: the shared ConfigMap, its own ConfigMap, then the data dir. */}}
{{- define "jetstream.envFrom" -}}
envFrom:
  - configMapRef:
      name: {{ include "jetstream.fullname" .root }}-common
  - configMapRef:
      name: {{ include "jetstream.fullname" .root }}-{{ .component }}
{{- end -}}

{{/* Volumes of every pod: the shared data claim and a writable /tmp. */}}
{{- define "jetstream.volumes" -}}
volumes:
  - name: data
    persistentVolumeClaim:
      claimName: {{ include "jetstream.claimName" .root }}
      {{- if and .readOnly (not .runWritable) }}
      readOnly: true
      {{- end }}
  - name: tmp
    emptyDir:
      sizeLimit: {{ .root.Values.tmpSizeLimit }}
{{- end -}}

{{- define "jetstream.volumeMounts" -}}
volumeMounts:
  - name: data
    mountPath: {{ .root.Values.persistence.mountPath }}
    {{- if .readOnly }}
    readOnly: true
    {{- end }}
  {{- if .runWritable }}
  {{- /* only <data>/run writable: the gateway's stats file beside the feed socket */}}
  - name: data
    mountPath: {{ .root.Values.persistence.mountPath }}/run
    subPath: run
  {{- end }}
  - name: tmp
    mountPath: /tmp
{{- end -}}

{{/*
Probes on the SmallRye health endpoints of the management port (never the public listener).
Readiness means "listeners bound and serving" (for the archive-server: its manifest loaded), never
"steady state": a bootstrap lasts hours and /status must stay reachable meanwhile. Call with (dict "root" $ "port" "management" "probes" .Values.ingester).
*/}}
{{- define "jetstream.probes" -}}
startupProbe:
  httpGet: {path: /q/health/started, port: {{ .port }}}
  periodSeconds: {{ .probes.startupProbe.periodSeconds }}
  failureThreshold: {{ .probes.startupProbe.failureThreshold }}
livenessProbe:
  httpGet: {path: /q/health/live, port: {{ .port }}}
  periodSeconds: {{ .probes.livenessProbe.periodSeconds }}
  timeoutSeconds: {{ .probes.livenessProbe.timeoutSeconds }}
  failureThreshold: {{ .probes.livenessProbe.failureThreshold }}
readinessProbe:
  httpGet: {path: /q/health/ready, port: {{ .port }}}
  periodSeconds: {{ .probes.readinessProbe.periodSeconds }}
  timeoutSeconds: {{ .probes.readinessProbe.timeoutSeconds }}
  failureThreshold: {{ .probes.readinessProbe.failureThreshold }}
{{- end -}}

{{/*
An environment value as text. Helm reads numbers from values files as float64, which would print
8388608 as 8.388608e+06; whole numbers are printed as integers.
*/}}
{{- define "jetstream.envValue" -}}
{{- if and (kindIs "float64" .) (eq . (floor .)) -}}
{{- int64 . | toString | quote -}}
{{- else -}}
{{- toString . | quote -}}
{{- end -}}
{{- end -}}

{{/*
terminationGracePeriodSeconds of a pod: the component's value, raised to shutdownTimeoutSeconds + 5
so the orchestrator never kills a process that is still inside its own shutdown budget (spec §7.1).
*/}}
{{- define "jetstream.terminationGrace" -}}
{{- max (int .value) (add (int .root.Values.shutdownTimeoutSeconds) 5) -}}
{{- end }}


{{/* The management container port every process serves /q/health and /q/metrics on. */}}
{{- define "jetstream.managementPort" -}}
- name: management
  containerPort: {{ .Values.managementPort }}
{{- end -}}

{{/*
Environment every container gets besides its ConfigMaps: the management port (Quarkus reads
QUARKUS_MANAGEMENT_PORT) and the JVM options, whose MaxRAMPercentage sizes the heap from the pod's
memory limit. Call with (dict "root" $ "v" .Values.ingester).
*/}}
{{- define "jetstream.jvmEnv" -}}
- name: QUARKUS_MANAGEMENT_PORT
  value: {{ .root.Values.managementPort | quote }}
- name: JDK_JAVA_OPTIONS
  value: {{ printf "-XX:MaxRAMPercentage=%v -XX:+ExitOnOutOfMemoryError" .v.maxRAMPercentage | quote }}
{{- end -}}

{{/* "true" when the gateways run in remote mode (TCP feed, no data volume, any node). */}}
{{- define "jetstream.gatewayRemote" -}}
{{- if eq .Values.gateway.mode "remote" }}true{{ end -}}
{{- end -}}

{{/* The Secret holding the feed's shared secret; remote mode without one fails the rendering. */}}
{{- define "jetstream.feedSecretName" -}}
{{- if and (not .Values.feed.secret.existingSecret) (not .Values.feed.secret.value) -}}
{{- fail "gateway.mode remote needs feed.secret.value or feed.secret.existingSecret (the TCP feed never runs unauthenticated)" -}}
{{- end -}}
{{- .Values.feed.secret.existingSecret | default (printf "%s-feed" (include "jetstream.fullname" .)) -}}
{{- end -}}

{{- define "jetstream.feedSecretKey" -}}
{{- if .Values.feed.secret.existingSecret }}{{ .Values.feed.secret.existingSecretKey }}{{ else }}secret{{ end -}}
{{- end -}}

{{/* Feed secret (and TLS) volumes of the ingester and remote gateways, as list items (indent 2 under volumes:). */}}
{{- define "jetstream.feedVolumes" -}}
- name: feed-secret
  secret:
    secretName: {{ include "jetstream.feedSecretName" . }}
    items:
      - key: {{ include "jetstream.feedSecretKey" . }}
        path: secret
{{- if .Values.feed.tlsSecret }}
- name: feed-tls
  secret:
    secretName: {{ .Values.feed.tlsSecret }}
{{- end }}
{{- end -}}

{{- define "jetstream.feedVolumeMounts" -}}
- name: feed-secret
  mountPath: /etc/jetstream/feed
  readOnly: true
{{- if .Values.feed.tlsSecret }}
- name: feed-tls
  mountPath: /etc/jetstream/feed-tls
  readOnly: true
{{- end }}
{{- end -}}
