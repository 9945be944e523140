package io.ductor.idempotency;

import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.HexFormat;

/**
 * Request fingerprints: SHA-256 over the parts that make a request what it is.
 */
public final class Fingerprints {

	private Fingerprints() {
	}

	/**
	 * @param parts the request's parts (method, path, body, ...), each length-prefixed so that
	 * moving bytes from one part to the next changes the fingerprint
	 * @return the lower-case hex SHA-256 of the parts
	 */
	public static String sha256(byte[]... parts) {
		MessageDigest digest;
		try {
			digest = MessageDigest.getInstance("SHA-256");
		}
		catch (NoSuchAlgorithmException ex) {
			throw new IllegalStateException("SHA-256 is required of every Java platform", ex);
		}
		for (byte[] part : parts) {
			digest.update(Integer.toString(part.length).getBytes(StandardCharsets.US_ASCII));
			digest.update((byte) ':');
			digest.update(part);
		}
		return HexFormat.of().formatHex(digest.digest());
	}

	/**
	 * @param parts the request's parts, as text (encoded as UTF-8)
	 * @return the lower-case hex SHA-256 of the parts
	 */
	public static String sha256(String... parts) {
		byte[][] bytes = new byte[parts.length][];
		for (int i = 0; i < parts.length; i++) {
			bytes[i] = parts[i].getBytes(StandardCharsets.UTF_8);
		}
		return sha256(bytes);
	}

}
