#!/usr/bin/python3
"""Fidelity check of kubesched-testapi with the official Python client (Debian's
python3-kubernetes): lists, creates, binding, status patch, errors, watches with
resource_version and timeout, and 410 for a resourceVersion older than the history window.

Usage: python_client_check.py URL TOKEN CA_FILE   (the server must run with --history 5)
Prints one line per check and exits non-zero on the first failure.
"""

import sys
import threading
import time

from kubernetes import client, watch
from kubernetes.client.rest import ApiException


def check(condition, what):
    if not condition:
        print("FAIL: " + what)
        sys.exit(1)
    print("ok: " + what)


def pod(name, labels=None):
    return client.V1Pod(
        metadata=client.V1ObjectMeta(name=name, labels=labels or {}),
        spec=client.V1PodSpec(containers=[client.V1Container(name="c", image="nginx")],
                              scheduler_name="kubesched"))


def main():
    url, token, ca_file = sys.argv[1:4]
    config = client.Configuration()
    config.host = url
    config.api_key = {"authorization": "Bearer " + token}
    config.ssl_ca_cert = ca_file
    api_client = client.ApiClient(config)
    core = client.CoreV1Api(api_client)

    names = [ns.metadata.name for ns in core.list_namespace().items]
    check("default" in names and "kube-system" in names, "default namespaces exist")

    core.create_node(client.V1Node(metadata=client.V1ObjectMeta(name="node-a")))
    created = core.create_namespaced_pod("default", pod("web", {"app": "web"}))
    check(created.metadata.uid and created.metadata.resource_version, "create sets uid and RV")
    check(created.status.phase == "Pending", "new pods are Pending")

    try:
        core.create_namespaced_pod("default", pod("web"))
        check(False, "duplicate create fails")
    except ApiException as error:
        check(error.status == 409 and "AlreadyExists" in error.body, "duplicate create is 409")
    try:
        core.read_namespaced_pod("missing", "default")
        check(False, "missing pod fails")
    except ApiException as error:
        check(error.status == 404 and "NotFound" in error.body, "missing pod is 404")

    # The Binding response is a Status, which the generated client cannot decode as a
    # V1Binding; read it raw as client-go users effectively do.
    binding = client.V1Binding(metadata=client.V1ObjectMeta(name="web"),
                               target=client.V1ObjectReference(kind="Node", name="node-a"))
    response = core.create_namespaced_binding("default", binding, _preload_content=False)
    check(response.status == 201, "binding answers 201")
    bound = core.read_namespaced_pod("web", "default")
    check(bound.spec.node_name == "node-a", "binding sets nodeName")
    check(any(c.type == "PodScheduled" and c.status == "True" for c in bound.status.conditions),
          "binding adds PodScheduled=True")

    patched = core.patch_namespaced_pod_status(
        "web", "default", {"status": {"conditions": [{"type": "Ready", "status": "True"}]}})
    types = sorted(c.type for c in patched.status.conditions)
    check(types == ["PodScheduled", "Ready"], "status patch merges conditions by type")

    listed = core.list_namespaced_pod("default", label_selector="app=web")
    check(len(listed.items) == 1, "label selector")
    unbound = core.list_pod_for_all_namespaces(field_selector="spec.nodeName=")
    check(len(unbound.items) == 0, "field selector spec.nodeName=")
    list_rv = listed.metadata.resource_version

    core.create_namespaced_pod("default", pod("later"))
    started = time.monotonic()
    events = []
    for event in watch.Watch().stream(core.list_namespaced_pod, "default",
                                      resource_version=list_rv, timeout_seconds=2):
        events.append((event["type"], event["object"].metadata.name))
    elapsed = time.monotonic() - started
    check(("ADDED", "later") in events, "watch from the list RV replays a later create")
    check(1.5 <= elapsed < 10, "watch ends at timeout_seconds (%.1fs)" % elapsed)

    # A live event arriving while the watch is open.
    received = []

    def watch_live():
        for event in watch.Watch().stream(core.list_namespaced_pod, "default",
                                          resource_version=core.list_namespaced_pod(
                                              "default").metadata.resource_version,
                                          timeout_seconds=3):
            received.append((event["type"], event["object"].metadata.name))
            if event["object"].metadata.name == "live":
                break

    thread = threading.Thread(target=watch_live)
    thread.start()
    time.sleep(0.5)
    core.create_namespaced_pod("default", pod("live"))
    thread.join(10)
    check(("ADDED", "live") in received, "watch streams a live create")

    for i in range(8):
        core.create_namespaced_config_map(
            "default", client.V1ConfigMap(metadata=client.V1ObjectMeta(name="cm%d" % i)))
    try:
        for _ in watch.Watch().stream(core.list_namespaced_pod, "default", resource_version="1",
                                      timeout_seconds=1):
            pass
        check(False, "watch from an expired RV fails")
    except ApiException as error:
        check(error.status == 410, "watch from an expired RV is 410 Gone")

    leases = client.CoordinationV1Api(api_client)
    lease = leases.create_namespaced_lease("kube-system", client.V1Lease(
        metadata=client.V1ObjectMeta(name="kubesched"),
        spec=client.V1LeaseSpec(holder_identity="a", lease_duration_seconds=15)))
    lease.spec.holder_identity = "b"
    updated = leases.replace_namespaced_lease("kubesched", "kube-system", lease)
    check(updated.spec.holder_identity == "b", "lease update")
    try:
        leases.replace_namespaced_lease("kubesched", "kube-system", lease)
        check(False, "stale lease update fails")
    except ApiException as error:
        check(error.status == 409, "stale lease update is 409 Conflict")

    core.create_namespaced_event("default", client.CoreV1Event(
        metadata=client.V1ObjectMeta(name="web.1"),
        involved_object=client.V1ObjectReference(kind="Pod", name="web", namespace="default"),
        reason="Scheduled", message="assigned", type="Normal"))
    events = core.list_namespaced_event("default", field_selector="involvedObject.name=web")
    check(len(events.items) == 1, "events by involvedObject.name")

    core.delete_namespaced_pod("web", "default")
    try:
        core.read_namespaced_pod("web", "default")
        check(False, "deleted pod is gone")
    except ApiException as error:
        check(error.status == 404, "deleted pod is gone")
    print("OK")


if __name__ == "__main__":
    main()
