{{/* The chart's name, and the full name of its objects (release-name-chart-name, at most 63 characters). */}}
{{- define "mcp-gateway.name" -}}
{{- default .Chart.Name .Values.nameOverride | trunc 63 | trimSuffix "-" }}
{{- end }}

{{- define "mcp-gateway.fullname" -}}
{{- if .Values.fullnameOverride }}
{{- .Values.fullnameOverride | trunc 63 | trimSuffix "-" }}
{{- else }}
{{- $name := default .Chart.Name .Values.nameOverride }}
{{- if contains $name .Release.Name }}
{{- .Release.Name | trunc 63 | trimSuffix "-" }}
{{- else }}
{{- printf "%s-%s" .Release.Name $name | trunc 63 | trimSuffix "-" }}
{{- end }}
{{- end }}
{{- end }}

{{- define "mcp-gateway.labels" -}}
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" | trunc 63 | trimSuffix "-" }}
{{ include "mcp-gateway.selectorLabels" . }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
{{- end }}

{{- define "mcp-gateway.selectorLabels" -}}
app.kubernetes.io/name: {{ include "mcp-gateway.name" . }}
app.kubernetes.io/instance: {{ .Release.Name }}
{{- end }}

{{- define "mcp-gateway.serviceAccountName" -}}
{{- if .Values.serviceAccount.create }}
{{- default (include "mcp-gateway.fullname" .) .Values.serviceAccount.name }}
{{- else }}
{{- default "default" .Values.serviceAccount.name }}
{{- end }}
{{- end }}

{{/* The MCP port (config.listen.port) and the separate metrics port when config.metrics.port is set. */}}
{{- define "mcp-gateway.port" -}}
{{- .Values.config.listen.port | default 3000 | int }}
{{- end }}

{{- define "mcp-gateway.metricsPort" -}}
{{- with .Values.config.metrics }}{{ if ne (toString .enabled) "false" }}{{ with .port }}{{ . | int }}{{ end }}{{ end }}{{ end }}
{{- end }}

{{/* Whether the gateways share a store: a Redis URL from a Secret, or one in the configuration. */}}
{{- define "mcp-gateway.sharedStore" -}}
{{- if or .Values.redis.existingSecret (and .Values.config.cache .Values.config.cache.redisUrl) }}true{{ end }}
{{- end }}

{{/*
Refusals the schema cannot express: several replicas (or an autoscaler that may make them) without a
shared store, whose caches, OAuth grants and rate budgets would each live in one pod.
*/}}
{{- define "mcp-gateway.validate" -}}
{{- $several := or (gt (int .Values.replicaCount) 1) (and .Values.autoscaling.enabled (gt (int .Values.autoscaling.maxReplicas) 1)) }}
{{- if and $several (not (include "mcp-gateway.sharedStore" .)) }}
{{- fail "several replicas (replicaCount > 1, or autoscaling.maxReplicas > 1) need a shared store: set redis.existingSecret (a Secret holding the Redis URL) or config.cache.redisUrl; without one each pod keeps its own OAuth grants, caches and rate budgets" }}
{{- end }}
{{- if and .Values.autoscaling.enabled (lt (int .Values.autoscaling.maxReplicas) (int .Values.autoscaling.minReplicas)) }}
{{- fail "autoscaling.maxReplicas must be at least autoscaling.minReplicas" }}
{{- end }}
{{- /* An Ingress without rules or a default backend is refused by the API server at apply time; a route without parents attaches to nothing (deployment try-out). */}}
{{- if and .Values.ingress.enabled (not .Values.ingress.hosts) }}
{{- fail "ingress.enabled needs ingress.hosts (e.g. --set 'ingress.hosts[0].host=mcp.example.com' --set 'ingress.hosts[0].paths[0].path=/' --set 'ingress.hosts[0].paths[0].pathType=Prefix'): an Ingress without rules is refused by the API server" }}
{{- end }}
{{- if and .Values.httpRoute.enabled (not .Values.httpRoute.parentRefs) }}
{{- fail "httpRoute.enabled needs httpRoute.parentRefs (the Gateway the route attaches to): a route without one receives no traffic" }}
{{- end }}
{{- /* Secrets are never values of this chart: a value would sit in the ConfigMap, readable by anyone who may read ConfigMaps, and in the release history. */}}
{{- $config := .Values.config | default dict }}
{{- range $path := list "console.adminToken:consoleAdminToken" "oauth.tokenSecret:tokenSecret" "oauth.tokenSecretPrevious:tokenSecretPrevious" "oauth.initialAccessToken:initialAccessToken" "cache.key:cacheKey" "cache.keyPrevious:cacheKeyPrevious" "audit.digestKey:auditDigestKey" }}
{{- $parts := splitList ":" $path }}
{{- $keys := splitList "." (first $parts) }}
{{- $section := get $config (first $keys) | default dict }}
{{- if and (kindIs "map" $section) (hasKey $section (last $keys)) }}
{{- fail (printf "config.%s is a secret and the chart never holds one (it would be rendered into the ConfigMap): put it in the Secret named by existingSecret, under the key secretKeys.%s names" (first $parts) (last $parts)) }}
{{- end }}
{{- end }}
{{- /* Secrets inside lists and maps, where they are unambiguous: a literal value is refused (deploy try-out).
A value comes from a Secret when it names a ${VARIABLE} (upstreamSecrets or extraEnv fill it) with no ${VARIABLE:-fallback},
whose fallback would be a literal. Names that only look like a credential's are warned about in NOTES, not refused. */}}
{{- $fromSecret := "put it in a Secret, give it to the pod with upstreamSecrets (or extraEnv), and write ${VARIABLE} here (no :- fallback): the chart never holds a secret (it would be rendered into the ConfigMap)" }}
{{- range $i, $apiKey := (($config.credentials | default dict).apiKeys | default list) }}
{{- range $field := list "secret" "token" }}
{{- with (get $apiKey $field) }}{{ if not (include "mcp-gateway.fromSecret" .) }}
{{- fail (printf "config.credentials.apiKeys[%d].%s is a literal secret: %s" $i $field $fromSecret) }}
{{- end }}{{ end }}
{{- end }}
{{- end }}
{{- range $i, $upstream := ($config.upstreams | default list) }}
{{- range $name, $value := ($upstream.headers | default dict) }}
{{- if and (regexMatch "(?i)^(authorization|proxy-authorization|cookie|x-api-key)$" $name) (toString $value) (not (include "mcp-gateway.fromSecret" $value)) }}
{{- fail (printf "config.upstreams[%d].headers.%s is a literal credential: %s" $i $name $fromSecret) }}
{{- end }}
{{- end }}
{{- with $upstream.url }}{{ if and (regexMatch "^[A-Za-z][A-Za-z0-9+.-]*://[^/@]*:[^/@]*@" .) (not (include "mcp-gateway.fromSecret" .)) }}
{{- fail (printf "config.upstreams[%d].url holds a password: %s" $i $fromSecret) }}
{{- end }}{{ end }}
{{- end }}
{{- range $name, $value := ((($config.oauth | default dict).external | default dict).credentialHeaders | default dict) }}
{{- if not (include "mcp-gateway.fromSecret" $value) }}
{{- fail (printf "config.oauth.external.credentialHeaders.%s is a literal credential: %s" $name $fromSecret) }}
{{- end }}
{{- end }}
{{- with $config.cache }}{{ with .redisUrl }}
{{- if regexMatch "^[A-Za-z][A-Za-z0-9+.-]*://[^/@]*:[^/@]*@" . }}
{{- fail "config.cache.redisUrl holds a password, which the chart would render into the ConfigMap: put the URL in a Secret and name it in redis.existingSecret (given to the gateway as REDIS_URL)" }}
{{- end }}
{{- end }}{{ end }}
{{- with (include "mcp-gateway.metricsPort" .) }}{{ if eq (int .) (int (include "mcp-gateway.port" $)) }}
{{- fail (printf "config.metrics.port %s is config.listen.port: the gateway refuses that (it would exit at start); choose another metrics port, or set config.metrics.port: null to serve /metrics on the MCP port" .) }}
{{- end }}{{ end }}
{{- /* The probes (and the Service) reach the pod IP: a gateway listening on loopback is never ready. */}}
{{- $host := (($config.listen | default dict).host | default "0.0.0.0") | toString }}
{{- if or (hasPrefix "127." $host) (eq $host "::1" "[::1]" "localhost") }}
{{- fail (printf "config.listen.host %s is loopback: the kubelet's probes and the Service reach the pod IP, so the pod would never be ready; use 0.0.0.0 (or :: for IPv6)" $host) }}
{{- end }}
{{- /* A budget that lets no pod go blocks every node drain. */}}
{{- if .Values.pdb.enabled }}
{{- $fewest := ternary (int .Values.autoscaling.minReplicas) (int .Values.replicaCount) .Values.autoscaling.enabled }}
{{- $min := toString .Values.pdb.minAvailable }}
{{- /* A number (given as one or as a string: --set-string), or a share the eviction API rounds up (50% of 1 is 1: deploy try-out). */}}
{{- if regexMatch "^[0-9]+$" $min }}
{{- if ge (int $min) $fewest }}
{{- fail (printf "pdb.minAvailable %d with %d replica(s) lets no pod be evicted, so every node drain would block: run more replicas (replicaCount, or autoscaling.minReplicas) than minAvailable, or leave pdb.enabled false" (int $min) $fewest) }}
{{- end }}
{{- else if regexMatch "^[0-9]+%$" $min }}
{{- $needed := div (add (mul (int (trimSuffix "%" $min)) $fewest) 99) 100 }}
{{- if ge (int $needed) $fewest }}
{{- fail (printf "pdb.minAvailable %s of %d replica(s) rounds up to %d and lets no pod be evicted, so every node drain would block: use a lower share, run more replicas, or leave pdb.enabled false" $min $fewest (int $needed)) }}
{{- end }}
{{- end }}
{{- end }}
{{- /* The configuration folder is a ConfigMap, mounted read-only: a lock file beside it could never be written. */}}
{{- with $config.pinning }}{{ with .lockFile }}
{{- if or (not (hasPrefix "/" .)) (hasPrefix "/etc/mcp-gateway/" .) }}
{{- fail (printf "config.pinning.lockFile %s would be in the read-only ConfigMap mount (a relative path is read beside the configuration): give an absolute path on a writable volume you mount (extraVolumes and extraVolumeMounts, e.g. /var/lib/mcp-gateway/pins.json)" .) }}
{{- end }}
{{- end }}{{ end }}
{{- end }}

{{/*
terminationGracePeriodSeconds: above the drain (shutdown.drainMs) plus the bound on what is in flight
(shutdown.graceMs), plus 5 s for closing upstream connections.
*/}}
{{- define "mcp-gateway.terminationGracePeriodSeconds" -}}
{{- $shutdown := .Values.config.shutdown | default dict }}
{{- $ms := add (int ($shutdown.drainMs | default 0)) (int ($shutdown.graceMs | default 10000)) }}
{{- add (div (add $ms 999) 1000) 5 }}
{{- end }}

{{/* The configuration file the gateway reads: the values' config, with the Redis TLS files where the chart mounts them. */}}
{{- define "mcp-gateway.config" -}}
{{- $config := deepCopy .Values.config }}
{{- with .Values.redis.tls.existingSecret }}
{{- $tls := dict "caFile" (printf "/etc/mcp-gateway/redis-tls/%s" $.Values.redis.tls.caKey) }}
{{- if and $.Values.redis.tls.certKey $.Values.redis.tls.keyKey }}
{{- $_ := set $tls "certFile" (printf "/etc/mcp-gateway/redis-tls/%s" $.Values.redis.tls.certKey) }}
{{- $_ := set $tls "keyFile" (printf "/etc/mcp-gateway/redis-tls/%s" $.Values.redis.tls.keyKey) }}
{{- end }}
{{- $cache := $config.cache | default dict }}
{{- $redis := $cache.redis | default dict }}
{{- $_ := set $redis "tls" (merge $tls ($redis.tls | default dict)) }}
{{- $_ := set $cache "redis" $redis }}
{{- $_ := set $config "cache" $cache }}
{{- end }}
{{- toYaml $config }}
{{- end }}

{{/* "true" when a config value is filled from the environment: it names a ${VARIABLE}, without a :- fallback (a literal). */}}
{{- define "mcp-gateway.fromSecret" -}}
{{- $value := toString . }}
{{- if and (regexMatch "\\$\\{[A-Za-z_][A-Za-z0-9_]*\\}" $value) (not (contains ":-" $value)) }}true{{ end }}
{{- end }}

{{/*
Config values whose name reads as a credential's (the last word a credential word: X-Auth-Token, API_KEY, DB_PASSWORD)
set literally, in upstream headers and env: one line each for NOTES. Not refused (DISABLE_AUTH=true, PUBLIC_KEY,
X-Idempotency-Key read the same), but a literal one is rendered into the ConfigMap.
*/}}
{{- define "mcp-gateway.literalCredentials" -}}
{{- $name := "(?i)(^|[-_.])(auth|apikey|key|token|tokens|secret|password|passwd|passphrase|pwd|pat|credentials?|jwt|bearer)$" }}
{{- $plain := "(?i)^(true|false|yes|no|on|off|[0-9]+)?$" }}
{{- range $i, $upstream := (.Values.config.upstreams | default list) }}
{{- range $field := list "headers" "env" }}
{{- range $key, $value := (get $upstream $field | default dict) }}
{{- if and (regexMatch $name $key) (not (regexMatch $plain (toString $value))) (not (include "mcp-gateway.fromSecret" $value)) }}
{{- printf "config.upstreams[%d].%s.%s\n" $i $field $key }}
{{- end }}
{{- end }}
{{- end }}
{{- end }}
{{- end }}
