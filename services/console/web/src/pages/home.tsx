/** The signed-in person's first page: who they are, which account, which environment. */
import { useQuery } from "@tanstack/react-query";
import { sessionQuery } from "../router.tsx";

export function HomePage() {
  const { data } = useQuery(sessionQuery);
  const user = data?.user;
  if (!user) return null;
  return (
    <section>
      <h1>{user.account.company_name}</h1>
      <dl className="facts">
        <dt>Environment</dt>
        <dd>{user.account.environment}</dd>
        <dt>Signed in as</dt>
        <dd>{user.email}</dd>
      </dl>
    </section>
  );
}
