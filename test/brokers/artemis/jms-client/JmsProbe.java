/*
 * A JMS application's view of an Artemis queue, for jms-type.test.ts: run as a single-file program
 * (`java -cp artemis-jms-client-all.jar JmsProbe.java ...`, Java 17) over Artemis's CORE protocol,
 * so what it sees is what Artemis's AMQP-to-JMS conversion hands any JMS consumer.
 *
 *   consume <broker-url> <queue> <selector or -> <max> <wait-ms>
 *       receives up to <max> messages matching the JMS selector (each wait ends after <wait-ms>
 *       without one), acknowledges them, and prints one JSON object per message:
 *       {"jms_type":…,"correlation_id":…,"text":…}
 *
 * <broker-url> is tcp://host:port?user=…&password=… (the user and password are taken out of it).
 */
import java.util.ArrayList;
import java.util.List;

import javax.jms.BytesMessage;
import javax.jms.Connection;
import javax.jms.Message;
import javax.jms.MessageConsumer;
import javax.jms.Session;
import javax.jms.TextMessage;

import org.apache.activemq.artemis.jms.client.ActiveMQConnectionFactory;

public class JmsProbe {
  public static void main(String[] args) throws Exception {
    if (args.length < 2) usage();
    String[] parts = args[1].split("\\?", 2);
    String user = null;
    String password = null;
    if (parts.length == 2) {
      for (String pair : parts[1].split("&")) {
        String[] kv = pair.split("=", 2);
        if (kv[0].equals("user")) user = kv[1];
        if (kv[0].equals("password")) password = kv[1];
      }
    }
    ActiveMQConnectionFactory factory = new ActiveMQConnectionFactory(parts[0]);
    try (Connection connection = factory.createConnection(user, password)) {
      connection.start();
      Session session = connection.createSession(false, Session.AUTO_ACKNOWLEDGE);
      switch (args[0]) {
        case "consume" -> {
          if (args.length != 6) usage();
          String selector = args[3].equals("-") ? null : args[3];
          int max = Integer.parseInt(args[4]);
          long waitMs = Long.parseLong(args[5]);
          MessageConsumer consumer = session.createConsumer(session.createQueue(args[2]), selector);
          List<String> lines = new ArrayList<>();
          while (lines.size() < max) {
            Message message = consumer.receive(waitMs);
            if (message == null) break;
            lines.add(describe(message));
          }
          consumer.close();
          for (String line : lines) System.out.println(line);
        }
        default -> usage();
      }
    }
  }

  private static String describe(Message message) throws Exception {
    String text;
    if (message instanceof TextMessage textMessage) {
      text = textMessage.getText();
    } else if (message instanceof BytesMessage bytes) {
      byte[] body = new byte[(int) bytes.getBodyLength()];
      bytes.readBytes(body);
      text = new String(body, java.nio.charset.StandardCharsets.UTF_8);
    } else {
      text = null;
    }
    return "{\"jms_type\":" + quoted(message.getJMSType()) + ",\"correlation_id\":" + quoted(message.getJMSCorrelationID()) + ",\"text\":" + quoted(text) + "}";
  }

  private static String quoted(String value) {
    if (value == null) return "null";
    StringBuilder out = new StringBuilder("\"");
    for (char c : value.toCharArray()) {
      if (c == '"' || c == '\\') out.append('\\').append(c);
      else if (c < 0x20) out.append(String.format("\\u%04x", (int) c));
      else out.append(c);
    }
    return out.append('"').toString();
  }

  private static void usage() {
    System.err.println("usage: JmsProbe consume <url> <queue> <selector|-> <max> <wait-ms>");
    System.exit(2);
  }
}
