import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Properties;
import java.util.Set;
import java.util.TreeSet;
import org.apache.kafka.common.serialization.Serdes;
import org.apache.kafka.streams.KafkaStreams;
import org.apache.kafka.streams.StreamsBuilder;
import org.apache.kafka.streams.StreamsConfig;
import org.apache.kafka.streams.TaskMetadata;
import org.apache.kafka.streams.ThreadMetadata;
import org.apache.kafka.streams.errors.StreamsUncaughtExceptionHandler.StreamThreadExceptionResponse;
import org.apache.kafka.streams.kstream.Materialized;
import org.apache.kafka.streams.kstream.Produced;

/**
 * A Kafka Streams word count (group.protocol=streams) that a Python test steers.
 *
 * <p>Arguments: bootstrap, application id, input topic, output topic, state dir, then any
 * number of Streams properties as key=value. Lines of input topic values are split on
 * spaces, regrouped by word (a repartition topic) and counted in a state store; the counts
 * go to the output topic as String keys and Long values. The line "poison" makes
 * processing throw; "on.error=SHUTDOWN_APPLICATION" among the properties makes that stop
 * the whole application (every instance) rather than this one.
 *
 * <p>stdout carries one JSON object per line: {"state": ...} on every state change and
 * {"active": [...], "standby": [...]} whenever the tasks this instance owns change (task ids
 * as "subtopology_partition"). stdin takes commands: "close" closes the application
 * (leaving the group) and exits.
 */
public final class WordCountApp {
    private static final Object OUT = new Object();
    /** An input line that makes processing throw. */
    private static final String POISON = "poison";
    /** The argument that says how the uncaught exception handler answers (default
     * SHUTDOWN_CLIENT; SHUTDOWN_APPLICATION asks the group to stop every instance). */
    private static final String ON_ERROR = "on.error=";

    private WordCountApp() {
    }

    private static void emit(String json) {
        synchronized (OUT) {
            System.out.println(json);
            System.out.flush();
        }
    }

    private static String quote(String s) {
        return "\"" + s.replace("\\", "\\\\").replace("\"", "\\\"").replace("\n", "\\n") + "\"";
    }

    private static String list(Set<String> items) {
        List<String> quoted = new ArrayList<>();
        for (String item : items) {
            quoted.add(quote(item));
        }
        return "[" + String.join(", ", quoted) + "]";
    }

    /** The tasks of this instance's threads, or null while it has no thread metadata. */
    private static String tasks(KafkaStreams streams) {
        Set<String> active = new TreeSet<>();
        Set<String> standby = new TreeSet<>();
        try {
            for (ThreadMetadata thread : streams.metadataForLocalThreads()) {
                for (TaskMetadata task : thread.activeTasks()) {
                    active.add(task.taskId().toString());
                }
                for (TaskMetadata task : thread.standbyTasks()) {
                    standby.add(task.taskId().toString());
                }
            }
        } catch (RuntimeException e) {
            return null;
        }
        return "{\"active\": " + list(active) + ", \"standby\": " + list(standby) + "}";
    }

    public static void main(String[] args) throws Exception {
        Properties props = new Properties();
        props.put(StreamsConfig.BOOTSTRAP_SERVERS_CONFIG, args[0]);
        props.put(StreamsConfig.APPLICATION_ID_CONFIG, args[1]);
        props.put(StreamsConfig.STATE_DIR_CONFIG, args[4]);
        props.put(StreamsConfig.GROUP_PROTOCOL_CONFIG, "streams");
        props.put(StreamsConfig.DEFAULT_KEY_SERDE_CLASS_CONFIG, Serdes.StringSerde.class);
        props.put(StreamsConfig.DEFAULT_VALUE_SERDE_CLASS_CONFIG, Serdes.StringSerde.class);
        StreamThreadExceptionResponse onError = StreamThreadExceptionResponse.SHUTDOWN_CLIENT;
        for (String arg : Arrays.copyOfRange(args, 5, args.length)) {
            int eq = arg.indexOf('=');
            if (arg.startsWith(ON_ERROR)) {
                onError = StreamThreadExceptionResponse.valueOf(arg.substring(eq + 1));
            } else {
                props.put(arg.substring(0, eq), arg.substring(eq + 1));
            }
        }
        StreamsBuilder builder = new StreamsBuilder();
        builder.<String, String>stream(args[2])
            .flatMapValues(line -> {
                if (line.equals(POISON)) {
                    throw new IllegalStateException("poison record");
                }
                return Arrays.asList(line.split(" "));
            })
            .groupBy((key, word) -> word)
            .count(Materialized.as("counts"))
            .toStream()
            .to(args[3], Produced.with(Serdes.String(), Serdes.Long()));
        KafkaStreams streams = new KafkaStreams(builder.build(), props);
        streams.setStateListener((now, before) -> emit("{\"state\": " + quote(now.name()) + "}"));
        StreamThreadExceptionResponse response = onError;
        streams.setUncaughtExceptionHandler(e -> {
            emit("{\"error\": " + quote(String.valueOf(e)) + "}");
            return response;
        });
        streams.start();

        Thread watcher = new Thread(() -> {
            String last = null;
            while (!Thread.currentThread().isInterrupted()) {
                String now = tasks(streams);
                if (now != null && !now.equals(last)) {
                    emit(now);
                    last = now;
                }
                try {
                    Thread.sleep(50);
                } catch (InterruptedException e) {
                    return;
                }
            }
        }, "task-watcher");
        watcher.setDaemon(true);
        watcher.start();

        BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
        String line;
        while ((line = in.readLine()) != null) {
            if (line.trim().equals("close")) {
                break;
            }
        }
        watcher.interrupt();
        boolean closed = streams.close(Duration.ofSeconds(20));
        emit("{\"closed\": " + closed + "}");
        System.exit(0);
    }
}
