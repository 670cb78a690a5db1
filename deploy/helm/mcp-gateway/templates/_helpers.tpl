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
{{- with .Values.config.metrics }}{{ with .port }}{{ . | int }}{{ end }}{{ end }}
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
{{- /* Secrets inside lists and maps: a literal value (no ${VAR}, which upstreamSecrets or extraEnv fill from a Secret) is refused (deploy try-out). */}}
{{- $fromSecret := "put it in a Secret, give it to the pod with upstreamSecrets (or extraEnv), and write ${VARIABLE} here: the chart never holds a secret (it would be rendered into the ConfigMap)" }}
{{- /* A name whose last word is a credential word (x-api-key, API_KEY, X-Auth-Token, DB_PASSWORD, Cookie), not one that only starts with one (KEYCLOAK_URL, TOKEN_ENDPOINT, SESSION_TIMEOUT). */}}
{{- $credentialName := "(?i)(^|[-_.])(auth|authorization|apikey|key|token|secret|password|passwd|pass|pwd|cookie|credentials?|session|sessionid|jwt|bearer)$" }}
{{- range $i, $apiKey := (($config.credentials | default dict).apiKeys | default list) }}
{{- range $field := list "secret" "token" }}
{{- with (get $apiKey $field) }}{{ if not (contains "${" (toString .)) }}
{{- fail (printf "config.credentials.apiKeys[%d].%s is a literal secret: %s" $i $field $fromSecret) }}
{{- end }}{{ end }}
{{- end }}
{{- end }}
{{- range $i, $upstream := ($config.upstreams | default list) }}
{{- range $name, $value := ($upstream.headers | default dict) }}
{{- if and (regexMatch $credentialName $name) (not (contains "${" (toString $value))) }}
{{- fail (printf "config.upstreams[%d].headers.%s is a literal credential: %s" $i $name $fromSecret) }}
{{- end }}
{{- end }}
{{- range $name, $value := ($upstream.env | default dict) }}
{{- if and (regexMatch $credentialName $name) (not (contains "${" (toString $value))) }}
{{- fail (printf "config.upstreams[%d].env.%s is a literal credential: %s" $i $name $fromSecret) }}
{{- end }}
{{- end }}
{{- with $upstream.url }}{{ if and (regexMatch "^[A-Za-z][A-Za-z0-9+.-]*://[^/@]*:[^/@]*@" .) (not (contains "${" .)) }}
{{- fail (printf "config.upstreams[%d].url holds a password: %s" $i $fromSecret) }}
{{- end }}{{ end }}
{{- end }}
{{- range $name, $value := ((($config.oauth | default dict).external | default dict).credentialHeaders | default dict) }}
{{- if not (contains "${" (toString $value)) }}
{{- fail (printf "config.oauth.external.credentialHeaders.%s is a literal credential: %s" $name $fromSecret) }}
{{- end }}
{{- end }}
{{- with $config.cache }}{{ with .redisUrl }}
{{- if regexMatch "^[A-Za-z][A-Za-z0-9+.-]*://[^/@]*:[^/@]*@" . }}
{{- fail "config.cache.redisUrl holds a password, which the chart would render into the ConfigMap: put the URL in a Secret and name it in redis.existingSecret (given to the gateway as REDIS_URL)" }}
{{- end }}
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
