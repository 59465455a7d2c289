package dev.agentx.clarify.deploy;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import com.google.gson.JsonElement;
import com.google.gson.JsonParser;
import io.kubernetes.client.openapi.models.V1ConfigMap;
import io.kubernetes.client.openapi.models.V1Deployment;
import io.kubernetes.client.openapi.models.V1Ingress;
import io.kubernetes.client.openapi.models.V1PersistentVolumeClaim;
import io.kubernetes.client.openapi.models.V1PodDisruptionBudget;
import io.kubernetes.client.openapi.models.V1Secret;
import io.kubernetes.client.openapi.models.V1Service;
import io.kubernetes.client.openapi.models.V1StatefulSet;
import java.io.IOException;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * Every document of deploy/kubernetes/ checked against the Kubernetes API's own schema, as the
 * API server checks it on {@code kubectl apply}: the models of the official Java client are
 * generated from the API's OpenAPI document, and their {@code validateJsonElement} refuses a field
 * the API does not define (a misspelt key, a key at the wrong depth) and a required field left out,
 * at every depth. No cluster runs here, so this is what stands in for the server's own check.
 */
class KubernetesSchemaTest {
    /** A validator of one kind of object. */
    interface Validator {
        void validate(JsonElement json) throws IOException;
    }

    /** The kinds the recipes use, by apiVersion and kind. */
    static final Map<String, Validator> KINDS = Map.of(
            "apps/v1 Deployment", V1Deployment::validateJsonElement,
            "apps/v1 StatefulSet", V1StatefulSet::validateJsonElement,
            "v1 Service", V1Service::validateJsonElement,
            "v1 PersistentVolumeClaim", V1PersistentVolumeClaim::validateJsonElement,
            "v1 Secret", V1Secret::validateJsonElement,
            "v1 ConfigMap", V1ConfigMap::validateJsonElement,
            "policy/v1 PodDisruptionBudget", V1PodDisruptionBudget::validateJsonElement,
            "networking.k8s.io/v1 Ingress", V1Ingress::validateJsonElement);

    static List<String> files() {
        return KubernetesManifestTest.FILES;
    }

    static void validate(JsonNode doc) throws IOException {
        String kind = doc.path("apiVersion").asText() + " " + doc.path("kind").asText();
        Validator v = KINDS.get(kind);
        if (v == null) {
            fail("no schema check for " + kind + ": add its model to KubernetesSchemaTest.KINDS");
        }
        v.validate(JsonParser.parseString(doc.toString()));
    }

    @ParameterizedTest
    @MethodSource("files")
    void everyDocumentIsValidForTheKubernetesApi(String file) throws IOException {
        List<String> problems = new ArrayList<>();
        for (JsonNode doc : KubernetesManifestTest.documents(file)) {
            try {
                validate(doc);
            } catch (IOException | IllegalArgumentException e) {
                problems.add(doc.path("kind").asText() + " " + doc.path("metadata").path("name").asText() + ": "
                        + e.getMessage());
            }
        }
        assertEquals(List.of(), problems, file);
    }

    /** The check finds a misspelt key deep in a Deployment, and a required field left out. */
    @Test
    void aMisspeltOrMissingFieldIsRefused() throws IOException {
        JsonNode deployment = KubernetesManifestTest.workload(KubernetesManifestTest.documents("agentx.yaml"));
        validate(deployment);

        ObjectNode misspelt = deployment.deepCopy();
        ((ObjectNode) misspelt.path("spec").path("template").path("spec"))
                .put("terminationGracePeriodSecond", 60);
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> validate(misspelt));
        assertTrue(e.getMessage().contains("terminationGracePeriodSecond"), e.getMessage());

        ObjectNode noContainers = deployment.deepCopy();
        ((ObjectNode) noContainers.path("spec").path("template").path("spec")).remove("containers");
        e = assertThrows(IllegalArgumentException.class, () -> validate(noContainers));
        assertTrue(e.getMessage().contains("containers"), e.getMessage());
    }
}
