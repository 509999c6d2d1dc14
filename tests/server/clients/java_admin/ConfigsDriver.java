import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.TreeMap;
import java.util.concurrent.TimeUnit;

import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.admin.AlterConfigOp;
import org.apache.kafka.clients.admin.Config;
import org.apache.kafka.clients.admin.ConfigEntry;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.common.config.ConfigResource;

/**
 * Change and read configs with the Java Admin: a topic's retention.ms and cleanup.policy
 * (SET and APPEND), then a bad value, then a consumer group's session time-out. Prints one
 * JSON object with what DescribeConfigs showed and the error of the bad value.
 *
 * Usage: ConfigsDriver BOOTSTRAP TOPIC GROUP (on kafka-clients 4.x, which knows GROUP resources)
 */
public final class ConfigsDriver {
    public static void main(String[] args) throws Exception {
        Properties props = new Properties();
        props.put(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, args[0]);
        props.put(AdminClientConfig.REQUEST_TIMEOUT_MS_CONFIG, "10000");
        props.put(AdminClientConfig.DEFAULT_API_TIMEOUT_MS_CONFIG, "15000");
        ConfigResource topic = new ConfigResource(ConfigResource.Type.TOPIC, args[1]);
        ConfigResource group = new ConfigResource(ConfigResource.Type.GROUP, args[2]);
        try (Admin admin = Admin.create(props)) {
            admin.createTopics(List.of(new NewTopic(args[1], 1, (short) 1))).all().get(15, TimeUnit.SECONDS);
            admin.incrementalAlterConfigs(Map.of(topic, List.of(
                    new AlterConfigOp(new ConfigEntry("retention.ms", "3600000"), AlterConfigOp.OpType.SET),
                    new AlterConfigOp(new ConfigEntry("cleanup.policy", "compact"), AlterConfigOp.OpType.APPEND))))
                    .all().get(15, TimeUnit.SECONDS);
            String refused;
            try {
                admin.incrementalAlterConfigs(Map.of(topic, List.of(new AlterConfigOp(
                        new ConfigEntry("retention.ms", "soon"), AlterConfigOp.OpType.SET))))
                        .all().get(15, TimeUnit.SECONDS);
                refused = "none";
            } catch (java.util.concurrent.ExecutionException e) {
                refused = e.getCause().getClass().getSimpleName() + ": " + e.getCause().getMessage();
            }
            admin.incrementalAlterConfigs(Map.of(group, List.of(new AlterConfigOp(
                    new ConfigEntry("consumer.session.timeout.ms", "50000"), AlterConfigOp.OpType.SET))))
                    .all().get(15, TimeUnit.SECONDS);
            Map<ConfigResource, Config> described = admin.describeConfigs(List.of(topic, group))
                    .all().get(15, TimeUnit.SECONDS);
            Map<String, Object> out = new TreeMap<>();
            for (String name : List.of("retention.ms", "cleanup.policy")) {
                ConfigEntry e = described.get(topic).get(name);
                out.put(name, e.value() + " " + e.source());
            }
            ConfigEntry session = described.get(group).get("consumer.session.timeout.ms");
            out.put("consumer.session.timeout.ms", session.value() + " " + session.source());
            out.put("refused", refused);
            StringBuilder json = new StringBuilder("{");
            for (Map.Entry<String, Object> e : out.entrySet()) {
                json.append(json.length() > 1 ? ", " : "").append('"').append(e.getKey())
                        .append("\": \"").append(String.valueOf(e.getValue()).replace("\"", "'"))
                        .append('"');
            }
            System.out.println(json.append("}"));
        }
    }
}
