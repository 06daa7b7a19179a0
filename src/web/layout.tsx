// Pieces of the signed-in apps' page frames (the console, the inbox).

/** Who is signed in, and the sign-out button (a POST with the session's CSRF token). */
export function WhoAndSignOut({ email, action, csrf }: { email: string; action: string; csrf: string }) {
  return (
    <div class="who">
      <span>{email}</span>
      <form method="post" action={action}>
        <input type="hidden" name="csrf" value={csrf} />
        <button type="submit" class="small">
          Sign out
        </button>
      </form>
    </div>
  );
}
